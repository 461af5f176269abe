// Draws strata-bench's chart specs (STRATA_CHARTS, built by report.go)
// with uPlot. A spec's tables are each source's x column (seconds, or the
// "nines" of a percentile) and columns, series[] describes the columns in
// order; uPlot.join aligns the tables: a line continues across another
// source's x values (undefined) and breaks at its own nulls (an interval
// that completed no batch). After the last chart's first draw the page carries
// data-charts-drawn="N" on <html>; errors land in data-js-errors (the
// headless-browser test reads both).
(function () {
  "use strict";
  var specs = window.STRATA_CHARTS || [];
  var root = document.documentElement;
  var HEIGHT = 260, NINES_MAX = 5, NINES_TICKS = [0, 1, 2, 3, 4, 5, 5.5], TIP_ROWS = 14, NEAR = 6;
  var drawn = 0, charts = [], groups = {}, syncing = false, ready = false;

  function fail(msg) {
    var prev = root.getAttribute("data-js-errors");
    root.setAttribute("data-js-errors", (prev ? prev + " | " : "") + msg);
  }

  // fmt is a value for tooltips: about four significant digits.
  function fmt(v) {
    if (v == null || isNaN(v)) return "–";
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    if (a === 0) return "0";
    return String(+v.toPrecision(3));
  }

  // fmtAxis is a tick label: k and M for large values, no float noise.
  function fmtAxis(v) {
    if (v == null) return "";
    var a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toPrecision(4) + "M";
    if (a >= 1e4) return +(v / 1e3).toPrecision(4) + "k";
    return String(+v.toPrecision(6));
  }

  // nines x = -log10(1 - p/100); beyond NINES_MAX is the maximum.
  function ninesLabel(x) {
    if (x > NINES_MAX + 1e-9) return "max";
    var p = 100 * (1 - Math.pow(10, -x));
    var d = Math.max(0, Math.ceil(x - 1e-9) - 1);
    return String(+p.toFixed(d));
  }

  function xLabel(spec, x) {
    if (x == null) return "–";
    if (spec.kind === "nines") {
      var l = ninesLabel(x);
      return l === "max" ? "max" : "p" + l;
    }
    return "t = " + (+x.toFixed(3)) + " s";
  }

  // nearest is the index of the column's own value at or next to idx
  // (undefined is another source's x value), -1 when there is none.
  function nearest(col, idx) {
    for (var d = 0; d <= NEAR; d++) {
      for (var j = idx - d; j <= idx + d; j += 2 * d || 1) {
        if (j < 0 || j >= col.length || col[j] === undefined) continue;
        return col[j] === null ? -1 : j;
      }
    }
    return -1;
  }

  // connected reports whether the values at i and j (j < i) are joined by
  // a line: nothing but other sources' x values between them, or a run
  // of nulls no longer than spec.gap_s.
  function connected(spec, x, d, j, i) {
    for (var k = j + 1; k < i; k++) {
      if (d[k] === null) return !!spec.gap_s && x[i] - x[j] <= spec.gap_s;
    }
    return true;
  }

  // isolatedPoints returns a points filter that shows values no line
  // reaches (a lone interval between pauses), which a line alone hides.
  function isolatedPoints(spec) {
    return function (u, sidx, show) {
      if (show) return null;
      var x = u.data[0], d = u.data[sidx], out = [], prev = -1;
      for (var i = 0; i < d.length; i++) {
        if (d[i] == null) continue;
        var next = i + 1;
        while (next < d.length && d[next] == null) next++;
        var left = prev >= 0 && connected(spec, x, d, prev, i);
        var right = next < d.length && connected(spec, x, d, i, next);
        if (!left && !right) out.push(i);
        prev = i;
      }
      return out.length ? out : null;
    };
  }

  // shortGapsSpanned returns a gaps filter that drops the gaps of a
  // latency line no wider than spec.gap_s.
  function shortGapsSpanned(spec) {
    return function (u, sidx, idx0, idx1, gaps) {
      if (!spec.gap_s) return gaps;
      var x0 = u.scales.x.min;
      var px = Math.abs(u.valToPos(x0 + spec.gap_s, "x", true) - u.valToPos(x0, "x", true));
      return gaps.filter(function (g) { return g[1] - g[0] > px; });
    };
  }

  // tooltip follows the cursor over the hovered chart (charts of a
  // workload share the cursor position, the tooltip shows on one).
  function tooltip(spec) {
    var tip, hovered = false;
    function hide() { tip.style.display = "none"; }
    return {
      hooks: {
        init: function (u) {
          tip = document.createElement("div");
          tip.className = "tip";
          hide();
          u.over.appendChild(tip);
          u.over.addEventListener("mouseenter", function () { hovered = true; });
          u.over.addEventListener("mouseleave", function () { hovered = false; hide(); });
        },
        setCursor: function (u) {
          var i = u.cursor.idx;
          if (!hovered || i == null) { hide(); return; }
          var rows = [];
          for (var s = 1; s < u.series.length; s++) {
            if (!u.series[s].show) continue;
            var j = nearest(u.data[s], i);
            if (j < 0) continue;
            rows.push({ label: u.series[s].label, color: spec.series[s - 1].color, v: u.data[s][j] });
          }
          if (rows.length === 0) { hide(); return; }
          rows.sort(function (a, b) { return b.v - a.v; });
          var more = rows.length - TIP_ROWS;
          rows = rows.slice(0, TIP_ROWS);
          tip.textContent = "";
          var h = document.createElement("div");
          h.className = "h";
          h.textContent = xLabel(spec, u.data[0][i]);
          tip.appendChild(h);
          rows.forEach(function (r) {
            var line = document.createElement("div");
            var sw = document.createElement("span");
            sw.className = "sw";
            sw.style.background = r.color;
            var v = document.createElement("span");
            v.className = "v";
            v.textContent = fmt(r.v) + " " + spec.unit;
            line.appendChild(sw);
            line.appendChild(document.createTextNode(r.label));
            line.appendChild(v);
            tip.appendChild(line);
          });
          if (more > 0) {
            var m = document.createElement("div");
            m.textContent = "… " + more + " more";
            tip.appendChild(m);
          }
          tip.style.display = "block";
          var left = u.cursor.left + 14, top = u.cursor.top + 14;
          if (left + tip.offsetWidth > u.over.clientWidth) left = Math.max(0, u.cursor.left - tip.offsetWidth - 14);
          if (top + tip.offsetHeight > u.over.clientHeight) top = Math.max(0, u.over.clientHeight - tip.offsetHeight);
          tip.style.left = left + "px";
          tip.style.top = top + "px";
        }
      }
    };
  }

  // smooth is col's centred moving average over w samples (nulls skipped,
  // kept null).
  function smooth(col, w) {
    if (w <= 1) return col;
    var h = (w - 1) / 2, out = new Array(col.length);
    for (var i = 0; i < col.length; i++) {
      if (col[i] == null) { out[i] = col[i]; continue; }
      var sum = 0, n = 0;
      for (var j = Math.max(0, i - h); j <= Math.min(col.length - 1, i + h); j++) {
        if (col[j] != null) { sum += col[j]; n++; }
      }
      out[i] = sum / n;
    }
    return out;
  }

  // smoothing is the moving-average window the page's control selects.
  function smoothing() {
    var sel = document.getElementById("smooth");
    return sel ? Math.max(1, +sel.value || 1) : 1;
  }

  // joined aligns a spec's tables for uPlot, rate columns smoothed over w.
  function joined(spec, w) {
    var NULL_EXPAND = 2;
    return uPlot.join(
      spec.tables.map(function (t) {
        return [t.x].concat(t.data.map(function (c) { return spec.smooth ? smooth(c, w) : c; }));
      }),
      spec.tables.map(function (t) { return [NULL_EXPAND].concat(t.data.map(function () { return NULL_EXPAND; })); }));
  }

  function ninesSplits(u) {
    var mn = u.scales.x.min, mx = u.scales.x.max;
    var t = NINES_TICKS.filter(function (x) { return x >= mn - 1e-9 && x <= mx + 1e-9; });
    if (t.length >= 2) return t;
    var out = [];
    for (var k = 0; k <= 4; k++) out.push(mn + (mx - mn) * k / 4);
    return out;
  }

  function build(spec, el) {
    var unit = spec.unit;
    var series = [{
      label: spec.kind === "nines" ? "percentile" : "time",
      value: function (u, v) { return xLabel(spec, v); }
    }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label, stroke: s.color, width: s.width, dash: s.dash || undefined, show: s.show,
        spanGaps: false, gaps: shortGapsSpanned(spec), points: { size: 5, width: 1, filter: isolatedPoints(spec) },
        value: function (u, v) { return v == null ? "–" : fmt(v) + " " + unit; }
      });
    });
    var xAxis = { label: spec.kind === "nines" ? "percentile (%)" : "seconds since the measurement began", labelSize: 22 };
    if (spec.kind === "nines") {
      xAxis.splits = ninesSplits;
      xAxis.values = function (u, splits) { return splits.map(function (x) { return ninesLabel(x); }); };
    } else {
      xAxis.values = function (u, splits) { return splits.map(fmtAxis); };
    }
    var yAxis = { label: spec.y_label, labelSize: 22, size: 60, values: function (u, splits) { return splits.map(fmtAxis); } };
    var scales = { x: { time: false } };
    scales.y = spec.y_log ? { distr: 3, log: 10 } : {
      range: function (u, mn, mx) { return [0, mx > 0 ? uPlot.rangeNum(0, mx, 0.1, true)[1] : 1]; }
    };
    var opts = {
      title: spec.title,
      width: Math.max(320, el.clientWidth),
      height: HEIGHT,
      scales: scales,
      series: series,
      axes: [xAxis, yAxis],
      legend: { live: false },
      focus: { alpha: 0.35 },
      cursor: {
        drag: { x: true, y: false },
        focus: { prox: 16 },
        sync: spec.group ? { key: spec.group } : undefined
      },
      plugins: [tooltip(spec)],
      hooks: {
        draw: [function (u) {
          if (el.getAttribute("data-drawn")) return;
          el.setAttribute("data-drawn", "1");
          if (++drawn === specs.length) root.setAttribute("data-charts-drawn", String(drawn));
        }],
        setScale: [function (u, key) {
          if (key !== "x" || !ready || syncing || !spec.group) return;
          syncing = true;
          (groups[spec.group] || []).forEach(function (o) {
            if (o !== u) o.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
          });
          syncing = false;
        }]
      }
    };
    el.setAttribute("data-series", String(spec.series.length));
    el.id = spec.id;
    return new uPlot(opts, joined(spec, smoothing()), el);
  }

  root.setAttribute("data-charts", String(specs.length));
  if (typeof uPlot === "undefined") {
    fail("uPlot did not load");
    return;
  }
  var els = document.querySelectorAll(".chart[data-chart]");
  for (var k = 0; k < els.length; k++) {
    var el = els[k], spec = specs[+el.getAttribute("data-chart")];
    try {
      var u = build(spec, el);
      charts.push({ u: u, el: el, spec: spec });
      if (spec.group) (groups[spec.group] = groups[spec.group] || []).push(u);
    } catch (e) {
      fail((spec ? spec.id : "chart " + k) + ": " + (e && e.message ? e.message : String(e)));
    }
  }
  ready = true;
  // For the console and the browser test: the charts with their specs.
  window.STRATA_PLOTS = charts;
  if (specs.length === 0) root.setAttribute("data-charts-drawn", "0");
  var sel = document.getElementById("smooth");
  if (sel) {
    sel.addEventListener("change", function () {
      var w = smoothing();
      charts.forEach(function (c) { if (c.spec.smooth) c.u.setData(joined(c.spec, w)); });
    });
  }
  var timer;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      charts.forEach(function (c) { c.u.setSize({ width: Math.max(320, c.el.clientWidth), height: HEIGHT }); });
    }, 100);
  });
})();
