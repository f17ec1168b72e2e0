// CSV downloads: the API's own CSV (type=csv) for the same parameters as the view. The token
// goes in a header, so a plain link cannot carry it: the file is fetched and handed to the
// browser as a download.
import { unwrap } from './client';

export async function saveCsv(answer: Promise<{ data?: unknown; error?: unknown; response: Response }>, filename: string): Promise<void> {
  const blob = unwrap(await answer) as Blob;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
