/** Column alignment like Go's tabwriter as kubectl configures it (padding 3, left aligned). */
export function renderTable(rows: string[][], padding = 3): string {
  if (rows.length === 0) return '';
  const widths: number[] = [];
  for (const r of rows) widen(widths, r);
  // One string built up, not an array per row: `get` renders a table of every object.
  let out = '';
  for (const r of rows) out += `${line(r, widths, padding)}\n`;
  return out;
}

/** A row's cells padded to the column widths, the last one as it is; no trailing blanks. */
function line(cells: string[], widths: number[], padding: number): string {
  if (cells.length === 0) return '';
  let s = '';
  const last = cells.length - 1;
  for (let i = 0; i < last; i++) s += cells[i].padEnd(widths[i] + padding);
  return (s + cells[last]).trimEnd();
}

/** Keeps column widths across calls so `get -w` rows line up with the header. */
export class StreamingTable {
  private widths: number[] = [];
  constructor(private readonly padding = 3) {}
  row(cells: string[]): string {
    widen(this.widths, cells);
    return `${line(cells, this.widths, this.padding)}\n`;
  }
  /** Sizes columns from a first batch (header + initial rows) before printing any. */
  prime(rows: string[][]): void {
    for (const r of rows) widen(this.widths, r);
  }
}

/** Grows each column's width to fit this row's cell. */
function widen(widths: number[], cells: string[]): void {
  for (let i = 0; i < cells.length; i++) widths[i] = Math.max(widths[i] ?? 0, cells[i].length);
}
