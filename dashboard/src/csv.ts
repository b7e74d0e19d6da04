// CSV of a table (api.md §11 "Every table downloads as CSV"): RFC 4180 quoting, and a cell that a
// spreadsheet would read as a formula (=, +, -, @, tab, carriage return first) is prefixed with a
// quote so an order id or campaign name never runs as one (OWASP "CSV injection"). Numbers are
// written as the API gave them (exact decimals, no thousands separators).

export interface CsvColumn<Row> {
  label: string;
  value(row: Row): string | number | boolean | null | undefined;
}

const FORMULA = /^[=+\-@\t\r]/;

function cell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = FORMULA.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv<Row>(columns: CsvColumn<Row>[], rows: Row[]): string {
  const lines = [columns.map((c) => cell(c.label)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => cell(c.value(row))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
