// The few DOM helpers every part of the demo page uses.

export const $ = (id) => document.getElementById(id);

/** A `tag` element holding `text`. */
export function cell(tag, text, className) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** Fills `table` with a row per [name, value] pair: the name as a header cell. */
export function fillKv(table, pairs) {
  table.replaceChildren(
    ...pairs.map(([name, value]) => {
      const tr = document.createElement("tr");
      tr.append(cell("th", name), cell("td", value));
      return tr;
    }),
  );
}
