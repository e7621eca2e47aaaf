import { SqlSyntaxError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const PROJECT = 'sqltest-lexical';

describe('lexical structure', () => {
  before(() => insertEvents('cloudflare.logs.prod', [{ project: PROJECT, event_message: 'lex', metadata: { request: { path: '/x' } } }]));

  it('when a source name is backticked with dots, then it reads that source', async () => {
    await expectTranslation(`select event_message from \`cloudflare.logs.prod\` where project = '${PROJECT}'`).toReturn([{ event_message: 'lex' }]);
  });

  it('when a backticked name has dashes, or a plain dotted name is lexable, then it names a source', async () => {
    await expectTranslation(`select count(*) as n from \`deno-relay-logs\` where project = '${PROJECT}'`).toReturn([{ n: 0 }]);
    await expectTranslation(`select count(*) as n from postgres.logs where project = '${PROJECT}'`).toReturn([{ n: 0 }]);
  });

  it("when strings use '…' and \"…\" with backslash escapes, then both are string literals", async () => {
    await expectTranslation(String.raw`select 'it\'s' as a, "say \"hi\"" as b, 'tab\there' as c, 'back\\slash' as d, '''tri'ple''' as e, r'\d+' as f`)
      .toReturn([{ a: "it's", b: 'say "hi"', c: 'tab\there', d: 'back\\slash', e: "tri'ple", f: '\\d+' }]);
  });

  it('when comments of all three kinds appear, then they are ignored', async () => {
    await expectTranslation(`select 1 as a -- one\n, 2 as b # two\n, /* three */ 3 as c`).toReturn([{ a: 1, b: 2, c: 3 }]);
  });

  it('when the select list ends with a comma before FROM, and the query with ;, then both are accepted', async () => {
    await expectTranslation(`select event_message, from \`cloudflare.logs.prod\` where project = '${PROJECT}';`).toReturn([{ event_message: 'lex' }]);
  });

  it('when a string is not terminated, then a syntax error points at it', async () => {
    await expectTranslation(`select\n  'abc`).toFail(SqlSyntaxError, /unterminated string literal \(line 2, column 3\)/);
  });

  it('when a comment is not terminated, then a syntax error', async () => {
    await expectTranslation('select 1 /* no end').toFail(SqlSyntaxError, /unterminated \/\* comment/);
  });

  it('when a quote hides inside a comment or a string, then it stays inert', async () => {
    await expectTranslation(`select '-- not a comment' as a, "/* nor this */" as b -- ' "\n`).toReturn([{ a: '-- not a comment', b: '/* nor this */' }]);
  });
});
