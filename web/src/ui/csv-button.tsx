import { useState } from 'react';
import { saveCsv } from '../api/csv';

type Answer = Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** Downloads the API's CSV for the parameters the table or chart was drawn with; `text` names it where a panel has two. */
export function CsvButton({ label, filename, load, text = 'CSV' }: { label: string; filename: string; load: () => Answer; text?: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <span className="csv">
      <button
        type="button"
        className="secondary"
        disabled={busy}
        aria-label={`Download CSV: ${label}`}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await saveCsv(load(), filename);
          } catch (e) {
            setError((e as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        {text}
      </button>
      {error && <span role="alert" className="error">{error}</span>}
    </span>
  );
}
