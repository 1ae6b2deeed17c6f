/** Column alignment like Go's tabwriter as kubectl configures it (padding 3, left aligned). */
export function renderTable(rows: string[][], padding = 3): string {
  if (rows.length === 0) return '';
  const widths: number[] = [];
  for (const r of rows) widen(widths, r);
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] + padding)))
          .join('')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** Keeps column widths across calls so `get -w` rows line up with the header. */
export class StreamingTable {
  private widths: number[] = [];
  constructor(private readonly padding = 3) {}
  row(cells: string[]): string {
    widen(this.widths, cells);
    return (
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(this.widths[i] + this.padding)))
        .join('')
        .trimEnd() + '\n'
    );
  }
  /** Sizes columns from a first batch (header + initial rows) before printing any. */
  prime(rows: string[][]): void {
    for (const r of rows) widen(this.widths, r);
  }
}

/** Grows each column's width to fit this row's cell. */
function widen(widths: number[], cells: string[]): void {
  for (const [i, c] of cells.entries()) widths[i] = Math.max(widths[i] ?? 0, c.length);
}
