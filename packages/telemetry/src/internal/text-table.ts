/** One column of a text table. */
export interface TextColumn {
  header: string;
  align: "left" | "right";
}

/** How table parts are styled (identity functions when colour is off). */
export interface TextStyle {
  header(text: string): string;
  first(text: string): string;
}

const width = (text: string): number => [...text].length;

/**
 * Lays out rows under headers with every column padded to its widest cell, two spaces apart.
 * Widths are measured on the plain text, so styling never breaks the alignment.
 */
export function renderTextTable(columns: readonly TextColumn[], rows: readonly (readonly string[])[], style: TextStyle): string[] {
  const widths = columns.map((column, index) => Math.max(width(column.header), ...rows.map((row) => width(row[index] ?? ""))));
  const pad = (text: string, index: number): string => {
    const room = " ".repeat((widths[index] ?? 0) - width(text));
    return columns[index]?.align === "right" ? room + text : text + room;
  };
  const last = columns.length - 1;
  const line = (cells: readonly string[], decorate: (text: string, index: number) => string) =>
    columns
      .map((_, index) => {
        const padded = pad(cells[index] ?? "", index);
        return decorate(index === last ? padded.trimEnd() : padded, index);
      })
      .join("  ");
  return [
    line(
      columns.map((column) => column.header),
      (text) => style.header(text),
    ),
    ...rows.map((row) => line(row, (text, index) => (index === 0 ? style.first(text) : text))),
  ];
}
