/**
 * OpenTelemetry's own OTLP/HTTP log exporters (JSON and protobuf, gzip too) against
 * `POST /v1/logs`; every record read back from the log table. Then the answers exporters
 * read: ExportLogsServiceResponse with partial_success when records were not stored.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { SourceRecord } from '../../src/sources/repository.js';
import { freshSource, serveTestApp, sourceRows, type Served } from './support.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded protobuf messages, read field by field
type Message = Record<string, any>;
const proto = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js').opentelemetry.proto.collector
  .logs.v1 as {
  ExportLogsServiceRequest: { encode(m: Message): { finish(): Uint8Array }; fromObject(o: Message): Message };
  ExportLogsServiceResponse: { decode(b: Uint8Array): Message; toObject(m: Message, o?: Message): Message };
};

/** The exporter, with every export result it reported. */
function recording(exporter: LogRecordExporter): { exporter: LogRecordExporter; results: number[] } {
  const results: number[] = [];
  return {
    results,
    exporter: {
      export: (logs: ReadableLogRecord[], done) =>
        exporter.export(logs, (r) => {
          results.push(r.code);
          done(r);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    },
  };
}

/** Emits `n` records through a LoggerProvider with a batch processor, then flushes and shuts it down. */
async function emitThrough(exporter: LogRecordExporter, tag: string, n: number): Promise<number> {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': `svc-${tag}`, 'deployment.environment': 'test' }),
    processors: [new BatchLogRecordProcessor({ exporter, maxExportBatchSize: 7, scheduledDelayMillis: 20 })],
  });
  const logger = provider.getLogger('shipper-test', '1.2.3');
  const base = Date.now() - 60_000;
  for (let i = 0; i < n; i++) {
    logger.emit({
      body: `${tag} record ${i}`,
      severityNumber: SeverityNumber.WARN,
      severityText: 'WARN',
      timestamp: base + i, // ms: rows sort by it
      attributes: { 'http.status_code': 200 + i, i, ok: i % 2 === 0, ratio: i / 4, tags: ['a', 'b'], tag },
    });
  }
  await provider.forceFlush();
  await provider.shutdown();
  return base;
}

describe('OTLP/HTTP logs at POST /v1/logs, from the OpenTelemetry exporters', function () {
  this.timeout(60_000);
  let s: Served;
  let source: SourceRecord;
  before(async () => {
    s = await serveTestApp();
    source = await freshSource(s, 'otlp');
  });
  after(() => s.close());

  const cases = [
    ['exporter-logs-otlp-http (JSON)', (url: string, headers: Record<string, string>) => new JsonExporter({ url, headers })],
    ['exporter-logs-otlp-proto (protobuf)', (url: string, headers: Record<string, string>) => new ProtoExporter({ url, headers })],
    [
      'exporter-logs-otlp-proto with gzip',
      (url: string, headers: Record<string, string>) => new ProtoExporter({ url, headers, compression: 'gzip' as never }),
    ],
    [
      'exporter-logs-otlp-http with gzip',
      (url: string, headers: Record<string, string>) => new JsonExporter({ url, headers, compression: 'gzip' as never }),
    ],
  ] as const;

  for (const [label, make] of cases) {
    it(`when ${label} sends 30 records, then every one is stored with its body, time, attributes and resource, and the exporter saw success`, async () => {
      const tag = label.replace(/\W+/g, '-');
      const { exporter, results } = recording(
        make(`${s.base}/v1/logs?source_name=${encodeURIComponent(source.name)}`, { 'x-api-key': s.keys.ingest }),
      );
      const base = await emitThrough(exporter, tag, 30);
      assert.ok(results.length >= 5, `exports: ${results.join(', ')}`);
      assert.ok(
        results.every((code) => code === 0),
        `export results: ${results.join(', ')}`,
      );

      const rows = (await sourceRows(s, source)).filter((r) => r.metadata?.[0]?.attributes?.[0]?.tag === tag);
      assert.deepEqual(
        rows.map((r) => r.event_message),
        Array.from({ length: 30 }, (_, i) => `${tag} record ${i}`),
      );
      assert.equal(rows[0].ts, new Date(base).toISOString().replace('Z', '000Z'));
      const m = rows[3].metadata[0];
      assert.deepEqual(m.attributes, [{ http_status_code: 203, i: 3, ok: false, ratio: 0.75, tags: ['a', 'b'], tag }]);
      assert.deepEqual(m.resource[0].service_name, `svc-${tag}`);
      assert.equal(m.resource[0].deployment_environment, 'test');
      assert.deepEqual(m.scope, [{ name: 'shipper-test', version: '1.2.3' }]);
      assert.equal(m.severity_text, 'WARN');
      assert.equal(m.severity_number, SeverityNumber.WARN);
    });
  }

  it('when the source is named by the x-source header and the key by the api_key parameter, then the exporter delivers too', async () => {
    const { exporter, results } = recording(
      new ProtoExporter({ url: `${s.base}/v1/logs?api_key=${s.keys.ingest}`, headers: { 'x-source': source.id } }),
    );
    await emitThrough(exporter, 'via-header', 5);
    assert.ok(
      results.every((code) => code === 0),
      `export results: ${results.join(', ')}`,
    );
    const rows = (await sourceRows(s, source)).filter((r) => r.metadata?.[0]?.attributes?.[0]?.tag === 'via-header');
    assert.equal(rows.length, 5);
  });

  describe('answers', () => {
    const now = BigInt(Date.now()) * 1_000_000n;
    const request = (records: Message[]) => ({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'raw' } }] },
          scopeLogs: [{ scope: { name: 'raw' }, logRecords: records }],
        },
      ],
    });
    const records = (tag: string) => [
      { timeUnixNano: String(now), body: { stringValue: `${tag} good` }, attributes: [{ key: 'tag', value: { stringValue: tag } }] },
      { timeUnixNano: String(now), body: { stringValue: 'bad\u0000body' }, attributes: [{ key: 'tag', value: { stringValue: tag } }] },
      {
        timeUnixNano: '978307200000000000',
        body: { stringValue: `${tag} stale` },
        attributes: [{ key: 'tag', value: { stringValue: tag } }],
      },
      {
        body: { kvlistValue: { values: [{ key: 'k', value: { intValue: '9007199254740993' } }] } },
        attributes: [{ key: 'tag', value: { stringValue: tag } }],
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: 'eee19b7ec3c1b174',
      },
    ];
    const stored = async (tag: string) => (await sourceRows(s, source)).filter((r) => r.metadata?.[0]?.attributes?.[0]?.tag === tag);

    it('when some protobuf records are invalid or stale, then 200 with partial_success counting them, and the rest is stored', async () => {
      const message = proto.ExportLogsServiceRequest.fromObject(
        request(
          records('raw-proto').map((r) => ({
            ...r,
            traceId: r.traceId && Buffer.from(r.traceId, 'hex'),
            spanId: r.spanId && Buffer.from(r.spanId, 'hex'),
          })),
        ),
      );
      const body = zlib.gzipSync(proto.ExportLogsServiceRequest.encode(message).finish());
      const res = await fetch(`${s.base}/v1/logs?source=${source.id}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip', 'x-api-key': s.keys.ingest },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/x-protobuf');
      const answer = proto.ExportLogsServiceResponse.toObject(
        proto.ExportLogsServiceResponse.decode(new Uint8Array(await res.arrayBuffer())),
        { longs: Number },
      );
      assert.equal(answer.partialSuccess.rejectedLogRecords, 2);
      assert.match(answer.partialSuccess.errorMessage, /1 invalid \(the first, record 1: .*NUL.*1 older than the source's retention/);
      const rows = await stored('raw-proto');
      assert.deepEqual(rows.map((r) => r.event_message).sort(), ['raw-proto good', '{"k":"9007199254740993"}']);
      const structured = rows.find((r) => r.event_message!.startsWith('{'))!;
      assert.equal(structured.metadata[0].trace_id, '5b8efff798038103d269b633813fc60c');
      assert.equal(structured.metadata[0].span_id, 'eee19b7ec3c1b174');
    });

    it('when some JSON records are invalid or stale, then 200 with partialSuccess in JSON, and the rest is stored', async () => {
      const res = await fetch(`${s.base}/v1/logs?source_name=${encodeURIComponent(source.name)}`, {
        method: 'POST',
        body: JSON.stringify(request(records('raw-json'))),
        headers: { 'content-type': 'application/json', 'x-api-key': s.keys.ingest },
      });
      assert.equal(res.status, 200);
      const answer = (await res.json()) as Message;
      assert.equal(answer.partialSuccess.rejectedLogRecords, '2');
      assert.equal((await stored('raw-json')).length, 2);
    });

    it('when every record is stored, then the answer is an empty ExportLogsServiceResponse', async () => {
      const res = await fetch(`${s.base}/v1/logs?source_name=${encodeURIComponent(source.name)}`, {
        method: 'POST',
        body: JSON.stringify(request([records('raw-ok')[0]])),
        headers: { 'content-type': 'application/json', 'x-api-key': s.keys.ingest },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), {});
    });

    it('when the exporter gets partial_success, then it reports it (and still counts the export as done)', async () => {
      const warnings: string[] = [];
      diag.setLogger(
        {
          warn: (...a: unknown[]) => void warnings.push(a.join(' ')),
          error: () => undefined,
          info: () => undefined,
          debug: () => undefined,
          verbose: () => undefined,
        },
        DiagLogLevel.WARN,
      );
      try {
        const { exporter, results } = recording(
          new JsonExporter({
            url: `${s.base}/v1/logs?source_name=${encodeURIComponent(source.name)}`,
            headers: { 'x-api-key': s.keys.ingest },
          }),
        );
        const provider = new LoggerProvider({ processors: [new BatchLogRecordProcessor({ exporter })] });
        provider.getLogger('t').emit({ body: 'too old', timestamp: Date.parse('2001-01-01T00:00:00Z') });
        await provider.forceFlush();
        await provider.shutdown();
        assert.deepEqual(results, [0]);
        assert.ok(
          warnings.some((w) => /Partial Success/.test(w) && /older than the source's retention/.test(w)),
          warnings.join('\n'),
        );
      } finally {
        diag.disable();
      }
    });

    it('when the body is not OTLP, the type is not accepted or the key is missing, then a 4xx with the error envelope', async () => {
      const post = (body: BodyInit, type: string, key = s.keys.ingest) =>
        fetch(`${s.base}/v1/logs?source_name=${encodeURIComponent(source.name)}`, {
          method: 'POST',
          body,
          headers: { 'content-type': type, 'x-api-key': key },
        });
      for (const [res, status] of [
        [await post(Buffer.from([0xff, 0xff, 0xff, 0x0f]), 'application/x-protobuf'), 400],
        [await post('{"resourceLogs": ', 'application/json'), 400],
        [await post('{"resourceLogs": 5}', 'application/json'), 400],
        [await post('x', 'text/plain'), 415],
        [await post('{}', 'application/json', 'not-a-key-of-anyone'), 401],
      ] as const) {
        assert.equal(res.status, status);
        const body = (await res.json()) as Message;
        assert.equal(body.error.code, status);
        assert.ok(Array.isArray(body.error.errors));
      }
      const noSource = await fetch(`${s.base}/v1/logs`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json', 'x-api-key': s.keys.ingest },
      });
      assert.equal(noSource.status, 400);
    });
  });
});
