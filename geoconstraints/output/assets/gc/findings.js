/* geoconstraints map.html: the findings layers (MIT licence, part of geoconstraints).
 *
 * Reads the compact payload written by geoconstraints.output.mapdata from the element
 * <script type="application/json" id="gc-findings-data">, and draws each place (a distinct
 * geometry of findings) once, in the layer of its most severe finding, on Leaflet's canvas
 * renderer. A layer builds its shapes when it is first shown. Popups list every finding of the
 * place and are built with textContent only (no HTML from the data).
 *
 * window.gcFindings: store() (the decoded payload), layer(map, status, styles, options),
 * layers (those made), fmt(value, unit) (numbers as the report prints them), placeOf(subject).
 */
(function (L) {
  "use strict";

  function buffer(b64) {
    var s = atob(b64), n = s.length, a = new Uint8Array(n);
    for (var i = 0; i < n; i++) { a[i] = s.charCodeAt(i); }
    return a.buffer;
  }
  function u8(b64) { return new Uint8Array(buffer(b64)); }
  function u32(b64) { return new Uint32Array(buffer(b64)); }
  function i32(b64) { return new Int32Array(buffer(b64)); }
  function f64(b64) { return new Float64Array(buffer(b64)); }
  function index(a) {
    var b = buffer(a.data);
    return a.dtype === "uint8" ? new Uint8Array(b) : (a.dtype === "uint16" ? new Uint16Array(b) : new Uint32Array(b));
  }

  var store = null;
  var timings = {decode_ms: 0, build_ms: {}};

  function decodeFamily(g) {
    if (!g || !g.n) { return null; }
    return {type: g.type, coords: i32(g.coords), offsets: (g.offsets || []).map(u32)};
  }

  function loadStore() {
    if (store) { return store; }
    var t0 = performance.now();
    var el = document.getElementById("gc-findings-data");
    var d = JSON.parse(el ? el.textContent : "{}");
    store = {data: d, n: d.n_places || 0};
    if (!store.n) { return store; }
    store.family = u8(d.place_family);
    store.top = u8(d.place_top);
    store.fill = u8(d.place_fill);
    store.start = u32(d.place_start);
    var layerOf = index(d.place_layer), names = d.subject_layers;
    store.subject = d.place_subject.map(function (id, i) { return (names[layerOf[i]] + " " + id).trim(); });
    store.geometry = {};
    store.index = new Uint32Array(store.n);  // place -> position in its family's ragged arrays
    ["point", "line", "polygon"].forEach(function (k) {
      store.geometry[k] = decodeFamily(d.geometry[k]);
      var places = u32(d.family_places[k]);
      for (var j = 0; j < places.length; j++) { store.index[places[j]] = j; }
    });
    store.rule = index(d.f_rule);
    store.status = u8(d.f_status);
    store.measured = f64(d.f_measured);
    store.threshold = index(d.f_threshold);
    store.unit = index(d.f_unit);
    timings.decode_ms = performance.now() - t0;
    return store;
  }

  function ll(g, k) {
    var o = store.data.origin, q = store.data.quantum;
    return [o[1] + g.coords[2 * k + 1] * q, o[0] + g.coords[2 * k] * q];
  }
  function run(g, a, b) {
    var out = [];
    for (var k = a; k < b; k++) { out.push(ll(g, k)); }
    return out;
  }

  /* Leaflet latlngs of a place: points [[lat, lng], ...], lines [[...], ...], polygons [[[ring], [hole]], ...]. */
  function latlngs(place) {
    var fam = ["point", "line", "polygon"][store.family[place]], g = store.geometry[fam], j = store.index[place];
    var o = g.offsets, t = g.type, out = [], a, b, p, r;
    if (fam === "point") {
      if (t === "POINT") { return [ll(g, j)]; }
      return run(g, o[0][j], o[0][j + 1]);
    }
    if (fam === "line") {
      if (t === "LINESTRING") { return [run(g, o[0][j], o[0][j + 1])]; }
      for (a = o[1][j]; a < o[1][j + 1]; a++) { out.push(run(g, o[0][a], o[0][a + 1])); }
      return out;
    }
    var polys = t === "POLYGON" ? [j, j + 1] : [o[2][j], o[2][j + 1]];
    for (p = polys[0]; p < polys[1]; p++) {
      var rings = [];
      for (r = o[1][p]; r < o[1][p + 1]; r++) { rings.push(run(g, o[0][r], o[0][r + 1])); }
      out.push(rings);
    }
    return out;
  }

  /* A number with its unit, as geoconstraints.output.report.format_value prints it. */
  function fmt(v, unit) {
    if (v === null || v === undefined || isNaN(v)) { return ""; }
    var num;
    if (!isFinite(v)) { num = v > 0 ? "\u221e" : "-\u221e"; }
    else if (v === Math.trunc(v) && Math.abs(v) < 1e15) { num = v.toLocaleString("en-US"); }
    else if (Math.abs(v) >= 100) {
      num = v.toLocaleString("en-US", {minimumFractionDigits: 1, maximumFractionDigits: 1});
    } else {
      var d = Math.max(2, 2 - Math.floor(Math.log10(Math.abs(v))));
      num = v.toFixed(d).replace(/0+$/, "").replace(/\.$/, "");
    }
    var texts = (loadStore().data.unit_text) || {};
    var u = Object.prototype.hasOwnProperty.call(texts, unit || "") ? texts[unit] : (unit || "");
    if (!u) { return num; }
    return u === "%" ? num + " %" : num + " " + u;
  }

  function findings(place) {
    var s = loadStore(), d = s.data, out = [];
    for (var i = s.start[place]; i < s.start[place + 1]; i++) {
      var st = s.status[i] & 7, rule = d.rules[s.rule[i]], unit = d.units[s.unit[i]];
      out.push({
        rule_id: rule.id, title: rule.title, citation: rule.citation, status: d.statuses[st],
        status_label: d.labels[st], waived: d.f_waived ? d.f_waived[i] : ((s.status[i] & 8) ? "waived" : ""),
        measured: fmt(s.measured[i], unit), threshold: fmt(d.thresholds[s.threshold[i]], unit),
        message: d.f_message ? d.f_message[i] : "",
        subject: d.f_subject ? d.f_subject[i] : s.subject[place]
      });
    }
    return out;
  }

  var FIELDS = [["rule_id", "Rule"], ["title", "Title"], ["status_label", "Status"], ["subject", "Subject"],
                ["citation", "Citation"], ["measured", "Measured"], ["threshold", "Threshold"],
                ["message", "Finding"], ["waived", "Waived"]];

  function popup(place) {
    var s = loadStore(), div = document.createElement("div"), list = findings(place);
    div.className = "gc-place";
    var head = document.createElement("b");
    head.textContent = s.subject[place] + " \u2014 " + list.length + (list.length === 1 ? " finding" : " findings");
    div.appendChild(head);
    list.forEach(function (f) {
      var t = document.createElement("table");
      t.className = "gc-popup gc-status-" + f.status;
      FIELDS.forEach(function (pair) {
        var v = f[pair[0]];
        if (v === null || v === undefined || v === "") { return; }
        var tr = t.insertRow(), th = document.createElement("th");
        th.textContent = pair[1];
        tr.appendChild(th);
        tr.insertCell().textContent = String(v);
      });
      div.appendChild(t);
    });
    if (!s.data.f_message) {
      var p = document.createElement("p");
      p.textContent = s.data.full_text_note || "";
      div.appendChild(p);
    }
    return div;
  }

  function tooltip(place) {
    var s = loadStore(), span = document.createElement("span");
    span.textContent = s.subject[place] + ": " + s.data.labels[s.top[place]] + " (" +
      (s.start[place + 1] - s.start[place]) + ")";
    return span;
  }

  var made = [];

  /* Most severe on top: bring the shown layers to the front, least severe first. */
  function reorder(map) {
    made.slice().sort(function (a, b) { return b.gcStatus - a.gcStatus; }).forEach(function (l) {
      if (map.hasLayer(l)) { l.bringToFront(); }
    });
  }

  var FindingsLayer = L.FeatureGroup.extend({
    initialize: function (status, styles, options) {
      L.FeatureGroup.prototype.initialize.call(this, [], options);
      this.gcStatus = status;
      this.gcStyles = styles;
      this.gcBuilt = false;
    },
    gcBuild: function (map) {
      var s = loadStore(), st = this.gcStyles, renderer = map.getRenderer(this), t0 = performance.now();
      for (var i = 0; i < s.n; i++) {
        if (s.top[i] !== this.gcStatus) { continue; }
        var fam = s.family[i], shapes = [], k, lls = latlngs(i);
        if (fam === 2) {
          shapes.push(L.polygon(lls, L.extend({renderer: renderer}, s.fill[i] ? st.polygon_fill : st.polygon)));
        } else if (fam === 1) {
          shapes.push(L.polyline(lls, L.extend({renderer: renderer}, st.line)));
        } else {
          for (k = 0; k < lls.length; k++) { shapes.push(L.circleMarker(lls[k], L.extend({renderer: renderer}, st.point))); }
        }
        for (k = 0; k < shapes.length; k++) { shapes[k].gcPlace = i; this.addLayer(shapes[k]); }
      }
      this.bindPopup(function (layer) { return popup(layer.gcPlace); }, {maxWidth: 460, maxHeight: 360});
      this.bindTooltip(function (layer) { return tooltip(layer.gcPlace); }, {sticky: true});
      this.gcBuilt = true;
      timings.build_ms[s.data.statuses[this.gcStatus]] = performance.now() - t0;
    },
    onAdd: function (map) {
      if (!this.gcBuilt) { this.gcBuild(map); }
      L.FeatureGroup.prototype.onAdd.call(this, map);
      reorder(map);
    },
    /* Shapes of a place in this layer (for tests and notebooks). */
    gcShapes: function (place) {
      var out = [];
      this.eachLayer(function (l) { if (l.gcPlace === place) { out.push(l); } });
      return out;
    }
  });

  window.gcFindings = {
    store: loadStore, layers: made, fmt: fmt, timings: timings, findings: findings, latlngs: latlngs,
    layer: function (status, styles, options) {
      var l = new FindingsLayer(status, styles, options);
      made.push(l);
      return l;
    },
    placeOf: function (subject) {
      var s = loadStore();
      return s.n ? s.subject.indexOf(subject) : -1;
    },
    placesOf: function (subject) {
      var s = loadStore(), out = [];
      for (var i = 0; i < s.n; i++) { if (s.subject[i] === subject) { out.push(i); } }
      return out;
    }
  };
})(L);
