/**
 * The logs explorer (docs/CONSOLE.md, "Logs explorer"): a source's events searched with LQL
 * through `GET /api/sources/:x/events`, and followed live through `GET /api/sources/:x/tail`
 * (liveTail.ts). The search (source, LQL, range) lives in the page's URL, so a link shares it and
 * a saved search is a URL; the key never goes in it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, type ApiError, type Row, type Source } from '../api/client';
import { Chart } from '../components/Chart';
import { ResultTable } from '../components/ResultTable';
import { formatUtc } from '../components/values';
import { navigate } from '../router';
import { openTail } from './liveTail';
import { fieldPaths, hintsFor } from './lqlHints';
import { TAIL_KEEP } from './tailLimits';

const RANGES: Record<string, number> = { '15m': 15 * 60_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 };
const SAVED_ITEM = 'logquery.savedSearches';
/** After the stream ends by itself (the service's 15-minute limit, a cut), live tail reconnects after this. */
const TAIL_RECONNECT_MS = 1000;

/** off → live (starting until the service says it listens) ⇄ paused → off. */
type TailState = 'off' | 'starting' | 'live' | 'paused';
/** A row of live tail; `fresh` when it arrived after the tail started. */
interface TailRow {
  row: Row;
  fresh: boolean;
}

interface SearchState {
  lql: string;
  /** A preset (`1h`) or an explicit window. */
  range: string;
  start?: string;
  end?: string;
}

interface Page {
  rows: Row[];
  cursor: string | null;
  kind: 'events' | 'chart';
  histogram: { interval_seconds: number; buckets: { timestamp: string; count: number }[] };
}

function stateFromUrl(): SearchState {
  const q = new URLSearchParams(location.search);
  return { lql: q.get('lql') ?? '', range: q.get('range') ?? '1h', start: q.get('start') ?? undefined, end: q.get('end') ?? undefined };
}

function urlOf(state: SearchState): string {
  const q = new URLSearchParams();
  if (state.lql) q.set('lql', state.lql);
  if (state.start && state.end) {
    q.set('start', state.start);
    q.set('end', state.end);
  } else q.set('range', state.range);
  return `${location.pathname}?${q.toString()}`;
}

function windowOf(state: SearchState): { start: string; end: string } {
  if (state.start && state.end) return { start: state.start, end: state.end };
  const end = Date.now();
  return { start: new Date(end - (RANGES[state.range] ?? RANGES['1h'])).toISOString(), end: new Date(end).toISOString() };
}

async function fetchPage(source: string, state: SearchState, cursor?: string): Promise<Page | ApiError['error']> {
  const { start, end } = windowOf(state);
  const { data, error } = await api.GET('/api/sources/{idOrName}/events', {
    params: { path: { idOrName: source }, query: { lql: state.lql, start, end, limit: '100', ...(cursor && { cursor }) } },
  });
  if (error) return (error as ApiError).error;
  return { rows: data.result as Row[], cursor: data.cursor, kind: data.kind, histogram: data.histogram };
}

export function Explorer({ name }: { name: string }) {
  const [sources, setSources] = useState<Source[]>([]);
  const [state, setState] = useState<SearchState>(stateFromUrl);
  const [typed, setTyped] = useState(state.lql);
  const [page, setPage] = useState<Page | null>(null);
  const [problem, setProblem] = useState<ApiError['error'] | null>(null);
  const [loading, setLoading] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [saved, setSaved] = useState<{ name: string; url: string }[]>(() => JSON.parse(localStorage.getItem(SAVED_ITEM) ?? '[]'));
  const sentinel = useRef<HTMLDivElement>(null);
  const [tail, setTailState] = useState<TailState>('off');
  const tailState = useRef<TailState>('off');
  const setTail = (next: TailState) => {
    tailState.current = next;
    setTailState(next);
  };
  const [tailRows, setTailRows] = useState<TailRow[]>([]);
  /** Rows that left the page past TAIL_KEEP, and arrivals the service skipped. */
  const [tailDropped, setTailDropped] = useState(0);
  const [tailSkipped, setTailSkipped] = useState(0);
  const stream = useRef<{ close(): void } | null>(null);

  useEffect(() => {
    void api.GET('/api/sources').then(({ data }) => data && setSources(data));
  }, []);
  const source = sources.find((s) => s.name === name);
  const fields = fieldPaths(source?.schema);

  const closeStream = () => {
    stream.current?.close();
    stream.current = null;
  };
  const openStream = (lql: string) => {
    closeStream();
    setTail('starting');
    const handle = openTail(name, lql, {
      onReady: () => setTail('live'),
      onEvents: (rows) =>
        setTailRows((kept) => {
          const next = [...rows.reverse().map((row) => ({ row, fresh: true })), ...kept];
          if (next.length <= TAIL_KEEP) return next;
          setTailDropped((n) => n + next.length - TAIL_KEEP);
          return next.slice(0, TAIL_KEEP);
        }),
      onSkipped: (count) => setTailSkipped((n) => n + count),
      // Reconnects unless this stream was paused, stopped or replaced meanwhile.
      onEnd: () =>
        setTimeout(() => {
          if (stream.current === handle && tailState.current !== 'paused' && tailState.current !== 'off') openStream(lql);
        }, TAIL_RECONNECT_MS),
      onProblem: (p) => {
        closeStream();
        setTail('off');
        setProblem(p);
      },
    });
    stream.current = handle;
  };
  const startTail = () => {
    setTailRows((page?.kind === 'events' ? page.rows : []).slice(0, TAIL_KEEP).map((row) => ({ row, fresh: false })));
    setTailDropped(0);
    setTailSkipped(0);
    openStream(state.lql);
  };
  const pauseTail = () => {
    closeStream();
    setTail('paused');
  };
  const stopTail = () => {
    closeStream();
    setTail('off');
    void search(state);
  };
  // Leaving the page or the source ends the stream.
  useEffect(() => {
    return () => {
      closeStream();
      setTail('off');
    };
  }, [name]);

  const search = async (next: SearchState) => {
    if (tailState.current !== 'off') {
      closeStream();
      setTail('off');
    }
    history.replaceState(null, '', urlOf(next));
    setState(next);
    setLoading(true);
    const answer = await fetchPage(name, next);
    setLoading(false);
    if ('rows' in answer) {
      setPage(answer);
      setProblem(null);
    } else {
      setProblem(answer);
      setPage(null);
    }
  };
  useEffect(() => {
    void search(state);
  }, [name]);

  const older = async () => {
    if (!page?.cursor || loading || tailState.current !== 'off') return;
    setLoading(true);
    const answer = await fetchPage(name, state, page.cursor);
    setLoading(false);
    if ('rows' in answer) setPage({ ...page, rows: [...page.rows, ...answer.rows], cursor: answer.cursor });
  };
  // Scrolling to the end of the rows loads older ones.
  useEffect(() => {
    if (!sentinel.current) return;
    const watcher = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && void older());
    watcher.observe(sentinel.current);
    return () => watcher.disconnect();
  }, [page, loading]);

  const save = () => {
    const label = prompt('Name this search', state.lql || name);
    if (!label) return;
    const next = [...saved.filter((s) => s.name !== label), { name: label, url: urlOf(state) }];
    localStorage.setItem(SAVED_ITEM, JSON.stringify(next));
    setSaved(next);
  };
  const column = /^lql:1:(\d+)$/.exec(problem?.errors?.[0]?.location ?? '')?.[1];

  return (
    <section class="explorer">
      <div class="title-row">
        <h1>Logs</h1>
        <select
          aria-label="source"
          value={name}
          onChange={(e) => navigate({ page: 'explorer', name: (e.target as HTMLSelectElement).value })}
        >
          {!source && <option value={name}>{name}</option>}
          {sources.map((s) => (
            <option value={s.name}>{s.name}</option>
          ))}
        </select>
      </div>
      <form
        class="lql-form"
        onSubmit={(e) => {
          e.preventDefault();
          void search({ ...state, lql: typed });
        }}
      >
        <input
          name="lql"
          class={`lql-input${problem ? ' invalid' : ''}`}
          placeholder="error m.status:>=500 -m.user.plan:NULL t:last@1h   or   c:count(*) c:group_by(t::minute)"
          value={typed}
          spellcheck={false}
          autocomplete="off"
          onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
        />
        <select
          aria-label="range"
          value={state.start ? 'custom' : state.range}
          onChange={(e) => void search({ lql: typed, range: (e.target as HTMLSelectElement).value })}
        >
          {Object.keys(RANGES).map((r) => (
            <option value={r}>last {r}</option>
          ))}
          {state.start && (
            <option value="custom">{`${formatUtc(Date.parse(state.start) * 1000)} – ${formatUtc(Date.parse(state.end!) * 1000)}`}</option>
          )}
        </select>
        <button class="button" type="submit">
          Search
        </button>
        {tail === 'off' ? (
          <button class="button secondary tail-start" type="button" disabled={page?.kind === 'chart'} onClick={startTail}>
            Live tail
          </button>
        ) : (
          <>
            {tail === 'paused' ? (
              <button class="button secondary tail-resume" type="button" onClick={() => openStream(state.lql)}>
                Resume
              </button>
            ) : (
              <button class="button secondary tail-pause" type="button" onClick={pauseTail}>
                Pause
              </button>
            )}
            <button class="button secondary tail-stop" type="button" onClick={stopTail}>
              Stop
            </button>
          </>
        )}
        <button class="button secondary" type="button" onClick={save}>
          Save
        </button>
        <button class="button secondary" type="button" onClick={() => void navigator.clipboard?.writeText(location.href)}>
          Copy link
        </button>
      </form>
      <ul class="hints">
        {hintsFor(typed, fields).map((h) => (
          <li>
            <button type="button" class="hint" title={h.help} onClick={() => setTyped(h.apply)}>
              {h.label}
            </button>
          </li>
        ))}
      </ul>
      {saved.length > 0 && (
        <p class="saved">
          Saved:{' '}
          {saved.map((s) => (
            <a href={s.url}>{s.name}</a>
          ))}
        </p>
      )}
      {problem && (
        <p class="error-box" data-column={column}>
          {problem.message}
          {column && <pre class="lql-mark">{`${typed}\n${' '.repeat(Number(column) - 1)}^`}</pre>}
        </p>
      )}
      {tail !== 'off' && (
        <p class="tail-status" data-state={tail}>
          {tail === 'starting' && 'Live tail: connecting…'}
          {tail === 'live' && `Live tail: new events matching "${state.lql}" appear at the top as they are ingested.`}
          {tail === 'paused' && 'Live tail paused: events ingested meanwhile are not shown; resume to go on.'}{' '}
          {`Keeps the newest ${TAIL_KEEP} rows`}
          {tailDropped > 0 && ` (${tailDropped} older left the page)`}
          {tailSkipped > 0 && `; ${tailSkipped} events arrived too fast and were skipped`}.
        </p>
      )}
      {page && (
        <>
          <Histogram histogram={page.histogram} onRange={(start, end) => void search({ lql: typed, range: state.range, start, end })} />
          {page.kind === 'chart' ? (
            <>
              <Chart rows={page.rows} />
              <ResultTable rows={page.rows} />
            </>
          ) : (
            <table class="results events">
              <tbody>
                {(tail === 'off' ? page.rows.map((row) => ({ row, fresh: false })) : tailRows).map(({ row, fresh }) => {
                  const id = String(row.id);
                  return (
                    <>
                      <tr class={fresh ? 'event live' : 'event'} data-id={id} onClick={() => setOpen(open === id ? null : id)}>
                        <td class="when">{formatUtc(row.timestamp)}</td>
                        <td>{String(row.event_message ?? '')}</td>
                      </tr>
                      {open === id && (
                        <tr class="event-detail">
                          <td colSpan={2}>
                            <pre>{JSON.stringify(row, null, 2)}</pre>
                          </td>
                        </tr>
                      )}
                    </>
                  );
                })}
              </tbody>
            </table>
          )}
          {page.kind === 'events' && !page.rows.length && <p class="muted">No events match.</p>}
          <div ref={sentinel} class="muted more">
            {tail !== 'off'
              ? 'Stop live tail to load older events.'
              : page.cursor
                ? loading
                  ? 'Loading older events…'
                  : 'Scroll for older events'
                : page.rows.length
                  ? 'No older events.'
                  : ''}
          </div>
        </>
      )}
    </section>
  );
}

/** Events per bucket; click a bar or drag across bars to search that range. */
function Histogram({ histogram, onRange }: { histogram: Page['histogram']; onRange: (start: string, end: string) => void }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!holder.current) return;
    const step = histogram.interval_seconds;
    const xs = histogram.buckets.map((b) => Date.parse(b.timestamp) / 1000);
    const data: uPlot.AlignedData = [xs, histogram.buckets.map((b) => b.count)];
    const pick = (from: number, to: number) => {
      const start = Math.floor(from / step) * step;
      const end = Math.max(start + step, Math.ceil(to / step) * step);
      onRange(new Date(start * 1000).toISOString(), new Date(end * 1000).toISOString());
    };
    const plot = new uPlot(
      {
        width: Math.max(320, holder.current.clientWidth),
        height: 140,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] } },
        legend: { show: false },
        cursor: { drag: { x: true, y: false, setScale: false } },
        series: [
          {},
          { label: 'events', fill: '#93c5fd', stroke: '#2563eb', paths: uPlot.paths.bars!({ size: [0.9, 40] }), points: { show: false } },
        ],
      },
      data,
      holder.current,
    );
    // A drag selects a range (uPlot draws it while the mouse moves); a click narrows to the bucket under the cursor.
    const onUp = () => {
      const { left, width } = plot.select;
      if (width >= 2) return pick(plot.posToVal(left, 'x'), plot.posToVal(left + width, 'x'));
      const idx = plot.cursor.idx;
      if (idx !== null && idx !== undefined) pick(xs[idx], xs[idx] + step);
    };
    plot.over.addEventListener('mouseup', onUp);
    return () => plot.destroy();
  }, [histogram]);
  const total = histogram.buckets.reduce((n, b) => n + b.count, 0);
  return (
    <div
      class="histogram"
      ref={holder}
      data-buckets={histogram.buckets.length}
      data-total={total}
      data-interval={histogram.interval_seconds}
    />
  );
}
