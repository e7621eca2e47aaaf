/**
 * BigQuery's hash functions and BYTES encodings against the examples of its reference (GoogleSQL's
 * hash_functions.md, string_functions.md), run on Postgres. BYTES come back as base64, as
 * BigQuery's API sends them; TO_HEX shows them as the reference prints digests.
 */
import assert from 'node:assert/strict';
import { expectTranslation, runTranslation } from '../support/translation.js';
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

  it('when SHA1 hashes the reference example, then the digest is BigQuery’s 20 bytes', async () => {
    // The reference prints b"\nMU\xa8\xd7x\xe5\x02/\xabp\x19w\xc5\xd8@\xbb\xc4\x86\xd0".
    await expectTranslation(
      `SELECT TO_HEX(SHA1("Hello World")) AS a, TO_HEX(SHA1(CAST("Hello World" AS BYTES))) AS b, BYTE_LENGTH(SHA1('')) AS c, TO_HEX(SHA1('')) AS d,
         TO_HEX(SHA1(REPEAT('a', 1000))) AS e, SHA1(NULL) AS f`,
    ).toReturn([
      {
        a: '0a4d55a8d778e5022fab701977c5d840bbc486d0',
        b: '0a4d55a8d778e5022fab701977c5d840bbc486d0',
        c: 20,
        // FIPS 180-4's empty message, and one of 1000 bytes (16 blocks): the well-known digests.
        d: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        e: '291e9a6c66994949b57ba5e650361e98fc36b1ba',
        f: null,
      },
    ]);
  });

  it('when FARM_FINGERPRINT runs the reference example, then each row’s fingerprint is BigQuery’s INT64', async () => {
    const { rows } = await runTranslation(
      `WITH example AS (
         SELECT 1 AS x, "foo" AS y, true AS z UNION ALL
         SELECT 2 AS x, "apple" AS y, false AS z UNION ALL
         SELECT 3 AS x, "" AS y, true AS z
       )
       SELECT x, CAST(FARM_FINGERPRINT(CONCAT(CAST(x AS STRING), y, CAST(z AS STRING))) AS STRING) AS row_fingerprint
       FROM example ORDER BY x`,
    );
    // Compared as text: the values are beyond a double's 53 bits.
    assert.deepEqual(rows, [
      { x: 1, row_fingerprint: '-1541654101129638711' },
      { x: 2, row_fingerprint: '2794438866806483259' },
      { x: 3, row_fingerprint: '-4880158226897771312' },
    ]);
  });

  it('when FARM_FINGERPRINT hashes inputs of every length class, then it is FarmHash Fingerprint64 bit for bit', async () => {
    // Fingerprint64 has separate paths for 0, 1–3, 4–7, 8–16, 17–32, 33–64 bytes and for longer
    // input in 64-byte blocks (a multiple of 64 ends on a full block). Expected values: Google's
    // C++ FarmHash (npm package farmhash 5.0.1, Fingerprint64), which gives the reference's rows above.
    const cases: [string, string][] = [
      ["''", '-7286425919675154353'],
      ["'a'", '-5528939962900187677'],
      ["'abcd'", '1897425971756105985'],
      ["'abcdefghijklmnop'", '6080716761534418621'],
      ["REPEAT('x', 32)", '-5545167349709743099'],
      ["REPEAT('x', 64)", '6916188127298655160'],
      ["REPEAT('ab', 64)", '-603918529221291818'],
      ["REPEAT('abc', 100)", '-5713926820395479967'],
      ["CAST('é' AS BYTES)", '693143013273849025'],
    ];
    const { rows } = await runTranslation(
      `SELECT ${cases.map(([e], i) => `CAST(FARM_FINGERPRINT(${e}) AS STRING) AS f${i}`).join(', ')}, FARM_FINGERPRINT(NULL) AS n`,
    );
    assert.deepEqual(rows, [{ ...Object.fromEntries(cases.map(([, v], i) => [`f${i}`, v])), n: null }]);
  });

  it('when BYTES literals are written as the reference writes them, then they hold those bytes', async () => {
    await expectTranslation(
      String.raw`SELECT TO_HEX(b'\x00\x01\x02\x03\xAA\xEE\xEF\xFF') AS a, TO_BASE64(b'\377\340') AS b, BYTE_LENGTH(b'абвгд') AS c,
         TO_BASE32(b'abcde\xFF') AS d, TO_HEX(rb'\x00') AS e, TO_HEX(Br"a\n") AS f, TO_HEX(B"a\nb") AS g, b'' AS h,
         TO_HEX(SHA256(b"Hello World")) = TO_HEX(SHA256("Hello World")) AS i, TO_HEX(b"""it's""") AS j`,
    ).toReturn([
      {
        a: '00010203aaeeefff',
        b: '/+A=',
        c: 10,
        d: 'MFRGGZDF74======',
        e: '5c783030',
        f: '615c6e',
        g: '610a62',
        h: '',
        i: true,
        j: '69742773',
      },
    ]);
    for (const bad of [String.raw`SELECT b'\u0041' AS x`, String.raw`SELECT b'\xZZ' AS x`, String.raw`SELECT b'\400' AS x`])
      await assert.rejects(runTranslation(bad), SqlSyntaxError, bad);
  });

  it('when TO_BASE32, FROM_BASE32, CODE_POINTS_TO_BYTES and SAFE_CONVERT_BYTES_TO_STRING run the reference examples, then the values are BigQuery’s', async () => {
    await expectTranslation(
      `SELECT TO_BASE32(FROM_HEX('6162636465ff')) AS a, TO_HEX(FROM_BASE32('MFRGGZDF74======')) AS b,
         CAST(CODE_POINTS_TO_BYTES([65, 98, 67, 100]) AS STRING) AS c, SAFE_CONVERT_BYTES_TO_STRING(FROM_HEX('c2')) AS d,
         TO_BASE32(CAST('' AS BYTES)) AS e, TO_BASE32(CAST('foobar' AS BYTES)) AS f, CAST(FROM_BASE32('MZXW6YTBOI') AS STRING) AS g,
         SAFE_CONVERT_BYTES_TO_STRING(FROM_HEX('61c3a962ffe282')) AS h, SAFE_CONVERT_BYTES_TO_STRING(CAST('żółw' AS BYTES)) AS i,
         CODE_POINTS_TO_BYTES([65, NULL]) AS j, TO_BASE32(NULL) AS k`,
    ).toReturn([
      {
        a: 'MFRGGZDF74======',
        b: '6162636465ff',
        c: 'AbCd',
        d: '\uFFFD',
        e: '',
        f: 'MZXW6YTBOI======',
        g: 'foobar',
        h: 'a\u00e9b\uFFFD\uFFFD',
        i: 'żółw',
        j: null,
        k: null,
      },
    ]);
  });

  it('when the ROT13 example of CODE_POINTS_TO_BYTES runs over TO_CODE_POINTS of BYTES, then it encodes the text', async () => {
    await expectTranslation(
      `SELECT CAST(CODE_POINTS_TO_BYTES(ARRAY_AGG(
         (SELECT CASE
                   WHEN chr BETWEEN CAST('a' AS BYTES) AND CAST('z' AS BYTES) THEN TO_CODE_POINTS(CAST('a' AS BYTES))[offset(0)] + MOD(code + 13 - TO_CODE_POINTS(CAST('a' AS BYTES))[offset(0)], 26)
                   WHEN chr BETWEEN CAST('A' AS BYTES) AND CAST('Z' AS BYTES) THEN TO_CODE_POINTS(CAST('A' AS BYTES))[offset(0)] + MOD(code + 13 - TO_CODE_POINTS(CAST('A' AS BYTES))[offset(0)], 26)
                   ELSE code
                 END
          FROM (SELECT code, CODE_POINTS_TO_BYTES([code]) chr))
         ORDER BY OFFSET)) AS STRING) AS encoded_string
       FROM UNNEST(TO_CODE_POINTS(CAST('Test String!' AS BYTES))) code WITH OFFSET`,
    ).toReturn([{ encoded_string: 'Grfg Fgevat!' }]);
  });

  it('when a byte function gets a value of another type or a bad value, then it is a 400 or BigQuery’s error', async () => {
    await expectTranslation(`SELECT TO_BASE32('abc')`).toFail(SqlSyntaxError, /TO_BASE32 takes BYTES as argument 1, not STRING/);
    await expectTranslation(`SELECT FARM_FINGERPRINT(12)`).toFail(
      SqlSyntaxError,
      /FARM_FINGERPRINT takes STRING or BYTES as argument 1, not INT64/,
    );
    await expectTranslation(`SELECT SHA1(1.5)`).toFail(SqlSyntaxError, /SHA1 takes STRING or BYTES as argument 1, not FLOAT64/);
    await expectTranslation(`SELECT CODE_POINTS_TO_BYTES(['a'])`).toFail(
      SqlSyntaxError,
      /CODE_POINTS_TO_BYTES takes ARRAY<INT64> as argument 1/,
    );
    await expectTranslation(`SELECT SAFE_CONVERT_BYTES_TO_STRING('abc')`).toFail(SqlSyntaxError, /takes BYTES as argument 1, not STRING/);
    await assert.rejects(runTranslation(`SELECT CODE_POINTS_TO_BYTES([65, 256])`), /CODE_POINTS_TO_BYTES: invalid code point 256/);
    await assert.rejects(runTranslation(`SELECT FROM_BASE32('MZX!')`), /FROM_BASE32: MZX! is not base32/);
  });

  it('when TO_HEX gets a STRING, then it is a 400 naming the function, as in BigQuery', async () => {
    await expectTranslation(`SELECT TO_HEX('abc')`).toFail(SqlSyntaxError, /TO_HEX takes BYTES as argument 1, not STRING/);
  });
});
