/**
 * A SQL text area that marks a problem at its line and column: a highlighted backdrop under a
 * transparent textarea (the same text in the same font), with line numbers beside it.
 */
import { useRef } from 'preact/hooks';

export interface Mark {
  line: number;
  column: number;
  message: string;
}

export function SqlEditor(props: { value: string; onInput: (v: string) => void; mark?: Mark; rows?: number; name: string }) {
  const { value, mark } = props;
  const backdrop = useRef<HTMLPreElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = value.split('\n');
  const rows = Math.max(props.rows ?? 8, lines.length + 1);
  const syncScroll = (e: Event) => {
    const t = e.currentTarget as HTMLTextAreaElement;
    if (backdrop.current) backdrop.current.scrollTop = t.scrollTop;
    if (backdrop.current) backdrop.current.scrollLeft = t.scrollLeft;
    if (gutter.current) gutter.current.scrollTop = t.scrollTop;
  };
  return (
    <div class="sql-editor-block">
      <div class={`sql-editor${mark ? ' has-error' : ''}`}>
        <div class="gutter" ref={gutter} aria-hidden="true">
          {lines.map((_, i) => (
            <div class={mark?.line === i + 1 ? 'error-line' : ''}>{i + 1}</div>
          ))}
        </div>
        <div class="code">
          <pre class="backdrop" ref={backdrop} aria-hidden="true">
            {lines.map((text, i) => (
              <div class={mark?.line === i + 1 ? 'error-line' : ''}>{mark?.line === i + 1 ? marked(text, mark.column) : text || ' '}</div>
            ))}
          </pre>
          <textarea
            name={props.name}
            spellcheck={false}
            rows={rows}
            value={value}
            onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
            onScroll={syncScroll}
          />
        </div>
      </div>
      {mark && (
        <p class="sql-error" data-line={mark.line} data-column={mark.column}>
          <strong>
            Line {mark.line}, column {mark.column}:
          </strong>{' '}
          {mark.message}
        </p>
      )}
    </div>
  );
}

/** The line with the character at `column` (1-based) wrapped in a mark; past the end, a mark after it. */
function marked(text: string, column: number) {
  const i = Math.min(Math.max(column - 1, 0), text.length);
  return (
    <>
      {text.slice(0, i)}
      <mark class="sql-error-mark">{text.slice(i, i + 1) || ' '}</mark>
      {text.slice(i + 1)}
    </>
  );
}
