/**
 * BigQuery's hash functions and BYTES encodings against the examples of its reference (GoogleSQL's
 * hash_functions.md, string_functions.md), run on Postgres. BYTES come back as base64, as
 * BigQuery's API sends them; TO_HEX shows them as the reference prints digests.
 */
import { expectTranslation } from '../support/translation.js';
import { SqlSyntaxError } from '../../src/sql/errors.js';

describe('library: hash functions and BYTES as BigQuery documents them', () => {
  it('when MD5, SHA256 and SHA512 hash the reference example, then the digests are BigQuery’s', async () => {
    await expectTranslation(
      `SELECT MD5("Hello World") AS md5, TO_HEX(MD5("Hello World")) AS a, TO_HEX(SHA256("Hello World")) AS b, TO_HEX(SHA512("Hello World")) AS c,
         TO_HEX(SHA256(CAST("Hello World" AS BYTES))) AS d, SHA256(NULL) AS e`,
    ).toReturn([
      {
        md5: 'sQqNsWTgdUEFt6mb5y4/5Q==',
        a: 'b10a8db164e0754105b7a99be72e3fe5',
        b: 'a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e',
        c: '2c74fd17edafd80e8447b0d46741ee243b7eb74dd2149a0ab1b9246fb30382f27e853d8585719e0e67cbda0daa8f51671064615d645ae27acb15bfb1447f459b',
        d: 'a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e',
        e: null,
      },
    ]);
  });

  it('when FROM_HEX, TO_HEX, FROM_BASE64 and TO_BASE64 run the reference examples, then the bytes are BigQuery’s', async () => {
    await expectTranslation(
      `SELECT TO_HEX(FROM_HEX('0AF')) AS a, TO_HEX(FROM_HEX('00010203aaeeefff')) AS b, CAST(FROM_HEX('666f6f626172') AS STRING) AS c,
         TO_BASE64(FROM_BASE64('/+A=')) AS d, TO_HEX(FROM_BASE64(REPLACE(REPLACE('_-A=', '-', '+'), '_', '/'))) AS e,
         TO_BASE64(CAST(REPEAT('x', 100) AS BYTES)) = CONCAT(REPEAT('eHh4', 33), 'eA==') AS f, BYTE_LENGTH(FROM_HEX('00ff')) AS g, FROM_HEX('666f6f') AS h`,
    ).toReturn([{ a: '00af', b: '00010203aaeeefff', c: 'foobar', d: '/+A=', e: 'ffe0', f: true, g: 2, h: 'Zm9v' }]);
  });

  it('when TO_HEX gets a STRING, then it is a 400 naming the function, as in BigQuery', async () => {
    await expectTranslation(`SELECT TO_HEX('abc')`).toFail(SqlSyntaxError, /TO_HEX takes BYTES as argument 1, not STRING/);
  });
});
