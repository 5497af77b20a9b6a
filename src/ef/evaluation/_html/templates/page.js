// The page's behaviour: draw the charts, build the sortable, filterable table, open drill-downs.
// Everything is read from the JSON in #ef-data; text goes into the page as text, never as HTML.
const data = JSON.parse(document.getElementById("ef-data").textContent);
const ROW_LIMIT = 1000;
const charts = {};
window.efReport = { data, charts };

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function show(value) {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.join(" ¶ ");
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(4);
  return String(value);
}

async function drawChart(name, spec, metric) {
  const target = [...document.querySelectorAll("[data-chart]")].find(
    (node) => node.dataset.chart === name);
  target.dataset.rendered = "false";
  if (charts[name]) charts[name].finalize();
  const result = await window.vegaEmbed(target, spec, { renderer: "svg", actions: false });
  charts[name] = result.view;
  if (name.startsWith("difference:")) {
    result.view.addEventListener("click", (event, item) => {
      if (item && item.datum && item.datum.query !== undefined) openQuery(item.datum.query);
    });
    target.dataset.metric = metric;
  }
  target.dataset.rendered = "true";
}

async function drawCharts() {
  await Promise.all(Object.entries(data.charts).map(
    ([name, spec]) => drawChart(name, spec, data.chart_metric)));
}

// A comparison page keeps every metric's per-topic charts; the selector draws one metric's,
// and the per-query table shows that metric's differences, read from the same charts.
const chartMetric = document.getElementById("chart-metric");
const headlineRows = data.rows;

function topicRows(specs) {
  const values = Object.values(specs).map(
    (spec) => new Map(spec.data.values.map((bar) => [bar.query, bar.difference])));
  return headlineRows.map((row) => [row[0], row[1],
    ...values.map((byQuery) => (byQuery.has(row[0]) ? byQuery.get(row[0]) : null))]);
}

if (chartMetric) {
  chartMetric.addEventListener("change", () => {
    const metric = chartMetric.value;
    const specs = metric === data.chart_metric ? data.charts : data.topic_charts[metric];
    data.rows = metric === data.chart_metric ? headlineRows : topicRows(specs);
    const heading = document.querySelector("#per-query h2");
    if (heading) heading.textContent = `Per query: ${metric} difference`;
    drawTable();
    Promise.all(Object.entries(specs).map(([name, spec]) => drawChart(name, spec, metric)))
      .catch((error) => console.error(error));
  });
}

// The table: every row is kept in memory; the first ROW_LIMIT of the sorted, filtered rows are drawn.
const table = { sortColumn: null, descending: false, filter: "", group: "", open: null };

function inGroup(query, choice) {
  // "group:<name>" keeps the group's queries, "none" the queries in no group.
  const groups = (data.groups && data.groups.query_groups[query]) || [];
  if (choice === "none") return groups.length === 0;
  return groups.includes(choice.slice("group:".length));
}

function visibleColumns() {
  // A text column nobody filled (no query texts given) is left out.
  return data.columns.map((name, index) => index).filter(
    (index) => index === 0 || index >= data.text_columns
      || data.rows.some((row) => row[index] !== null && row[index] !== undefined
        && !(Array.isArray(row[index]) && row[index].length === 0)));
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

function cellClass(index) {
  if (index >= data.text_columns) return "num";
  if (data.kind === "rag" && index === 4) return "contexts";
  if (data.kind === "evaluation" && index === 1) return "text";
  return null;
}

function drawTable() {
  const element = document.getElementById("queries");
  if (!element) return;
  const columns = visibleColumns();
  const head = el("tr");
  for (const index of columns) {
    const th = el("th", { "data-column": data.columns[index] }, data.columns[index]);
    if (table.sortColumn === index) th.dataset.sort = table.descending ? "desc" : "asc";
    th.addEventListener("click", () => {
      table.descending = table.sortColumn === index ? !table.descending : index >= data.text_columns;
      table.sortColumn = index;
      drawTable();
    });
    head.append(th);
  }
  element.tHead.replaceChildren(head);
  const needle = table.filter.toLowerCase();
  let rows = data.rows;
  if (needle) {
    rows = rows.filter((row) => row.some((value, index) => index < data.text_columns
      && value !== null && show(value).toLowerCase().includes(needle)));
  }
  if (table.group) rows = rows.filter((row) => inGroup(row[0], table.group));
  if (table.sortColumn !== null) {
    const index = table.sortColumn;
    const sign = table.descending ? -1 : 1;
    rows = [...rows].sort((a, b) => {
      const order = compare(a[index], b[index]);
      // Missing values stay last whichever way the column is sorted.
      if (a[index] === null || a[index] === undefined || b[index] === null || b[index] === undefined) return order;
      return sign * order;
    });
  }
  const body = document.createDocumentFragment();
  for (const row of rows.slice(0, ROW_LIMIT)) {
    const tr = el("tr", { "data-query": row[0] });
    if (row[0] === table.open) tr.className = "open";
    for (const index of columns) {
      const cell = el("td", { class: cellClass(index) }, show(row[index]));
      tr.append(cell);
    }
    if (data.drilldowns) tr.addEventListener("click", () => openQuery(row[0]));
    body.append(tr);
  }
  element.tBodies[0].replaceChildren(body);
  const shown = Math.min(rows.length, ROW_LIMIT);
  document.getElementById("shown").textContent = rows.length > ROW_LIMIT
    ? `showing ${shown} of ${rows.length} matching rows (of ${data.rows.length}); filter or sort to see others`
    : `${rows.length} of ${data.rows.length} rows`;
}

function gradeMark(grade) {
  if (grade === null || grade === undefined) return el("span", { class: "grade unjudged", title: "not judged" }, "?");
  return el("span", { class: grade > 0 ? "grade relevant" : "grade nonrelevant", title: `grade ${grade}` }, show(grade));
}

function snippetOf(doc) {
  const text = data.snippets && data.snippets[doc];
  return text ? el("div", { class: "snippet" }, text) : null;
}

function rankedList(page) {
  const list = el("ol", { class: "ranked" });
  page.ranked.forEach(([doc, grade], index) => {
    list.append(el("li", { "data-doc": doc, "data-grade": grade === null ? "unjudged" : grade },
      el("span", { class: "rank" }, `${index + 1}.`), gradeMark(grade),
      el("span", { class: "doc" }, doc), snippetOf(doc)));
  });
  return list;
}

function missedList(page) {
  const list = el("ul", { class: "missed" });
  for (const [doc, grade, rank] of page.missed) {
    list.append(el("li", { "data-doc": doc, "data-grade": grade, "data-rank": rank === null ? "none" : rank },
      gradeMark(grade), el("span", { class: "doc" }, doc),
      el("span", { class: "where" }, rank === null ? "not retrieved" : `ranked ${rank}`), snippetOf(doc)));
  }
  return list;
}

function openQuery(query) {
  const section = document.getElementById("drilldown");
  if (!section) return;
  table.open = query;
  const row = data.rows.find((candidate) => candidate[0] === query);
  const parts = [el("h2", {}, `Query ${query}`)];
  if (row && row[1]) parts.push(el("p", { class: "query-text" }, row[1]));
  const page = data.drilldowns[query];
  if (!page) {
    parts.push(el("p", { class: "note" }, "No ranking: the page was made without the run and the qrels."));
  } else if (data.kind === "comparison") {
    const systems = el("div", { class: "systems" });
    for (const [system, ranking] of Object.entries(page)) {
      systems.append(el("div", { class: "system", "data-system": system },
        el("h3", {}, system), rankedList(ranking),
        el("h3", {}, `Relevant, not in its top ${ranking.ranked.length}`), missedList(ranking)));
    }
    parts.push(systems);
  } else {
    parts.push(el("h3", {}, `Top ${page.ranked.length} of ${page.retrieved} retrieved`), rankedList(page),
      el("h3", {}, "Relevant documents outside them"), missedList(page));
  }
  section.replaceChildren(...parts);
  section.dataset.query = query;
  section.hidden = false;
  drawTable();
  section.scrollIntoView({ block: "start" });
}

const groupFilter = document.getElementById("group-filter");
if (groupFilter) {
  groupFilter.addEventListener("change", () => { table.group = groupFilter.value; drawTable(); });
}
const filter = document.getElementById("filter");
if (filter) {
  filter.addEventListener("input", () => { table.filter = filter.value; drawTable(); });
}
drawTable();
drawCharts().then(
  () => {
    // Milliseconds from navigation to a page whose charts are drawn and table built.
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "true";
  },
  (error) => { document.body.dataset.ready = "error"; console.error(error); });
