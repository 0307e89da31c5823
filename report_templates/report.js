/* Optional sorting and filtering of the VM table. The report reads fully without it. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var box = document.getElementById("vm-filter-box");
  var input = document.getElementById("vm-filter");
  var table = document.getElementById("vm-table");
  if (!table) { return; }
  var body = table.tBodies[0];
  var count = document.getElementById("vm-filter-count");
  var selects = ["readiness", "severity", "owner"].map(function (k) {
    return [k, document.getElementById("vm-filter-" + k)];
  });
  function apply() {
    var needle = input ? input.value.trim().toLowerCase() : "";
    var shown = 0;
    var active = !!needle;
    Array.prototype.forEach.call(body.rows, function (row) {
      var hit = !needle || row.textContent.toLowerCase().indexOf(needle) !== -1;
      selects.forEach(function (pair) {
        var sel = pair[1];
        if (sel && sel.value) {
          active = true;
          if (row.getAttribute("data-" + pair[0]) !== sel.value) { hit = false; }
        }
      });
      row.hidden = !hit;
      if (hit) { shown += 1; }
    });
    count.textContent = active ? shown + " of " + body.rows.length + " VMs" : "";
  }
  if (box && input) {
    box.hidden = false;
    input.addEventListener("input", apply);
    selects.forEach(function (pair) { if (pair[1]) { pair[1].addEventListener("change", apply); } });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.tabIndex = 0;
    function sort() {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        return cell.getAttribute("data-sort") || cell.textContent.trim();
      }
      rows.sort(function (a, b) {
        var r = key(a).localeCompare(key(b), undefined, { numeric: true });
        return asc ? r : -r;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
  });
})();
