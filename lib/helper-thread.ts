// A helper thread that answers requests by id: started when first needed (or at start-up),
// started again at the next request after it exits, its replies matched to their requests,
// and every request waiting on it rejected when it fails. It never keeps the process alive:
// whoever awaits its work does.
import { Worker, type TransferListItem } from 'node:worker_threads';

/** What the thread posts: a request's result or error, by the request's id; or, once, that it is ready. */
export type HelperReply<R> = (R & { id: number }) | { id: number; error: string } | { ready: true };

export class HelperThread<Req extends object, Res extends object> {
  private worker: Worker | undefined;
  private readyNow = false;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (r: Res) => void; reject: (e: Error) => void }>();

  /** `entry`: the thread's script; `name` says which thread in errors. */
  constructor(
    private readonly entry: URL,
    private readonly name: string,
  ) {}

  /** Whether the running thread has said it is ready (for threads that say so). */
  get ready(): boolean {
    return this.readyNow;
  }

  /** Starts the thread unless it runs. */
  start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.entry);
    this.worker = worker;
    this.readyNow = false;
    worker.on('message', (r: HelperReply<Res>) => {
      if ('ready' in r) {
        if (this.worker === worker) this.readyNow = true;
        return;
      }
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if ('error' in r) w?.reject(new Error(r.error));
      else w?.resolve(r);
    });
    const gone = (e: Error) => {
      if (this.worker === worker) {
        this.worker = undefined;
        this.readyNow = false;
      }
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`${this.name} exited (${code})`)));
    // After the listeners: adding a message listener refs the thread again.
    worker.unref();
    return worker;
  }

  /** Sends a request (the thread started if it is not running), `transfer` moved to it; its result. */
  call(req: Req, transfer: readonly TransferListItem[] = []): Promise<Res> {
    const worker = this.start();
    const id = ++this.seq;
    return new Promise<Res>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ ...req, id }, [...transfer]);
    });
  }
}
