import { SqlSyntaxError, SqlUnsupportedError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const PROJECT = 'sqltest-lexical';

describe('lexical structure', () => {
  before(() => insertEvents('cloudflare.logs.prod', [{ project: PROJECT, event_message: 'lex', metadata: { request: { path: '/x' } } }]));

  it('when a source name is backticked with dots, then it reads that source', async () => {
    await expectTranslation(`select event_message from \`cloudflare.logs.prod\` where project = '${PROJECT}'`).toReturn([
      { event_message: 'lex' },
    ]);
  });

  it('when a backticked name has dashes, or a plain dotted name is lexable, then it names a source', async () => {
    await expectTranslation(`select count(*) as n from \`deno-relay-logs\` where project = '${PROJECT}'`).toReturn([{ n: 0 }]);
    await expectTranslation(`select count(*) as n from postgres.logs where project = '${PROJECT}'`).toReturn([{ n: 0 }]);
  });

  it('when strings use \'…\' and "…" with backslash escapes, then both are string literals', async () => {
    await expectTranslation(
      String.raw`select 'it\'s' as a, "say \"hi\"" as b, 'tab\there' as c, 'back\\slash' as d, '''tri'ple''' as e, r'\d+' as f`,
    ).toReturn([{ a: "it's", b: 'say "hi"', c: 'tab\there', d: 'back\\slash', e: "tri'ple", f: '\\d+' }]);
  });

  it("when a quote is doubled inside a string ('it''s', as the dashboard escapes search input), then it is one quote", async () => {
    await expectTranslation(
      `select 'it''s' as a, "say ""hi""" as b, '' as c, 'x''' as d, event_message from \`cloudflare.logs.prod\` where project = '${PROJECT}' and event_message not like '%it''s%'`,
    ).toReturn([{ a: "it's", b: 'say "hi"', c: '', d: "x'", event_message: 'lex' }]);
  });

  it('when a backslash precedes a character that starts no escape, then both are kept as written, as regular expressions need', async () => {
    await expectTranslation(
      String.raw`select '\s+' as a, regexp_contains('a@example.com', '@example\.com$') as b, regexp_contains('a@exampleXcom', '@example\.com$') as c, regexp_contains('x  y', 'x\s+y') as d`,
    ).toReturn([{ a: '\\s+', b: true, c: false, d: true }]);
    await expectTranslation(String.raw`select '\x4' as a`).toFail(SqlSyntaxError, /invalid escape sequence \\x/);
  });

  it('when a Postgres-style :: cast is written, then it casts as CAST would', async () => {
    await expectTranslation(
      `select event_message::text as m, '42'::int8 + 1 as n, '1.5'::double precision as f, '2026-01-02 03:04:05'::timestamp with time zone as t from \`cloudflare.logs.prod\` where project = '${PROJECT}' and event_message::text like '%le%'`,
    ).toReturn([{ m: 'lex', n: 43, f: 1.5, t: '2026-01-02T03:04:05.000Z' }]);
    await expectTranslation(`select 1::regclass as x`).toFail(SqlUnsupportedError, /cast to regclass is not supported/);
  });

  it('when comments of all three kinds appear, then they are ignored', async () => {
    await expectTranslation(`select 1 as a -- one\n, 2 as b # two\n, /* three */ 3 as c`).toReturn([{ a: 1, b: 2, c: 3 }]);
  });

  it('when the select list ends with a comma before FROM, and the query with ;, then both are accepted', async () => {
    await expectTranslation(`select event_message, from \`cloudflare.logs.prod\` where project = '${PROJECT}';`).toReturn([
      { event_message: 'lex' },
    ]);
  });

  it('when a string is not terminated, then a syntax error points at it', async () => {
    await expectTranslation(`select\n  'abc`).toFail(SqlSyntaxError, /unterminated string literal \(line 2, column 3\)/);
  });

  it('when a comment is not terminated, then a syntax error', async () => {
    await expectTranslation('select 1 /* no end').toFail(SqlSyntaxError, /unterminated \/\* comment/);
  });

  it('when a quote hides inside a comment or a string, then it stays inert', async () => {
    await expectTranslation(`select '-- not a comment' as a, "/* nor this */" as b -- ' "\n`).toReturn([
      { a: '-- not a comment', b: '/* nor this */' },
    ]);
  });
});
