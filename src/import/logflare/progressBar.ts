/**
 * The importer's progress on stderr: on a terminal one line redrawn in place (a bar, events done
 * of all, events per second of this run, where it is), at most ten times a second; elsewhere (a
 * log file, `docker compose logs`) a plain line every ten seconds. Either way a last line at the
 * end. stdout stays for the report.
 */
export interface ProgressOutput {
  write(text: string): unknown;
  /** A terminal: redraw in place. */
  isTTY?: boolean;
}

const TTY_EVERY_MS = 100;
const LOG_EVERY_MS = 10_000;
const WIDTH = 30;

export class ProgressBar {
  private total = 0;
  private done = 0;
  /** Events of this run (the rate is theirs, not of those imported before). */
  private thisRun = 0;
  private startedAt = 0;
  private shownAt = 0;
  private where = '';

  constructor(
    private readonly out: ProgressOutput | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** `already`: events imported by earlier runs. */
  start(total: number, already: number): void {
    this.total = total;
    this.done = already;
    this.startedAt = this.now();
    this.show(true);
  }

  advance(events: number, where: string): void {
    this.done += events;
    this.thisRun += events;
    this.where = where;
    this.show(false);
  }

  finish(): void {
    this.where = 'done';
    this.show(true);
    if (this.out?.isTTY) this.out.write('\n');
  }

  /** Events read by this run (imported or refused). */
  get runEvents(): number {
    return this.thisRun;
  }

  /** Events per second of this run so far. */
  rate(): number {
    const seconds = (this.now() - this.startedAt) / 1000;
    return seconds > 0 ? this.thisRun / seconds : 0;
  }

  line(): string {
    const fraction = this.total ? Math.min(1, this.done / this.total) : 1;
    const filled = Math.round(fraction * WIDTH);
    const count = (n: number) => n.toLocaleString('en-US');
    return (
      `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${Math.floor(fraction * 100)}% ` +
      `${count(this.done)}/${count(this.total)} events, ${count(Math.round(this.rate()))} events/s` +
      (this.where ? `  ${this.where}` : '')
    );
  }

  private show(always: boolean): void {
    if (!this.out) return;
    const now = this.now();
    const every = this.out.isTTY ? TTY_EVERY_MS : LOG_EVERY_MS;
    if (!always && now - this.shownAt < every) return;
    this.shownAt = now;
    // \x1b[K clears what a longer earlier line left at the end.
    this.out.write(this.out.isTTY ? `\r${this.line()}\x1b[K` : `${this.line()}\n`);
  }
}
