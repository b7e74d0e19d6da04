import { type CsvColumn, toCsv } from '../csv.js';

/** A button that saves the table's rows as `<filename>.csv` (all of them, not only those on screen). */
export function CsvDownload<Row>({
  filename,
  columns,
  rows,
  label = 'Download CSV',
}: {
  filename: string;
  columns: CsvColumn<Row>[];
  rows: Row[];
  label?: string;
}) {
  const download = () => {
    const url = URL.createObjectURL(new Blob([toCsv(columns, rows)], { type: 'text/csv;charset=utf-8' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = `${filename}.csv`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  };
  return (
    <button type="button" class="secondary csv-download no-print" onClick={download} disabled={rows.length === 0}>
      {label}
    </button>
  );
}
