import assert from 'node:assert/strict';
import type { Translation } from '../../src/sql/index.js';
import {
  TRANSLATION_MAX_KEY_BYTES,
  TRANSLATION_MAX_VALUE_BYTES,
  TranslationCache,
  translationKey,
} from '../../src/endpoints/translationCache.js';

/** A translation as the service caches it, its text growing with the caller `sql`. */
function translationOf(sql: string): Translation {
  return { sql: `WITH "t" AS (SELECT 1) ${sql}`, parameters: [], columns: [{ name: 'n', type: 'INT64' }], warnings: [] };
}
const largeSql = (i: number, bytes: number) => `select ${i} as n -- ${'x'.repeat(bytes)}`;

describe('translation cache byte bound', () => {
  it('when many large distinct `sql` values are translated, then the cache stays within its byte budget and a hot entry survives', () => {
    const budget = 2 * 1024 * 1024;
    const cache = new TranslationCache(budget);
    const hotKey = translationKey('hot', 1, 0, 'select 1 as n');
    const hot = translationOf('select 1 as n');
    cache.set(hotKey, hot);
    for (let i = 0; i < 200; i++) {
      const sql = largeSql(i, 90 * 1024); // each entry ~180 KB: key and translated text
      const key = translationKey('e', 1, 0, sql);
      cache.set(key, translationOf(sql));
      assert.equal(cache.get(key)?.sql, translationOf(sql).sql, `entry ${i} is cached`);
      assert.ok(cache.bytes <= budget, `${cache.bytes} bytes held after ${i + 1} entries`);
      assert.equal(cache.get(hotKey), hot, `the hot entry survives entry ${i}`);
    }
    assert.ok(cache.bytes > budget / 2, 'the budget is used');
  });

  it('when a key or a translation is past its own limit, then it is not cached (and evicts nothing)', () => {
    const cache = new TranslationCache();
    const small = translationKey('e', 1, 0, 'select 1 as n');
    cache.set(small, translationOf('select 1 as n'));
    const held = cache.bytes;
    const longKey = translationKey('e', 1, 0, largeSql(1, TRANSLATION_MAX_KEY_BYTES));
    cache.set(longKey, translationOf('select 1 as n'));
    assert.equal(cache.get(longKey), undefined);
    const bigValue = translationKey('e', 1, 0, 'select 2 as n');
    cache.set(bigValue, translationOf(largeSql(2, TRANSLATION_MAX_VALUE_BYTES)));
    assert.equal(cache.get(bigValue), undefined);
    assert.equal(cache.bytes, held);
    assert.ok(cache.get(small));
  });

  it('when the largest allowed key and value are cached, then both count against the budget', () => {
    const cache = new TranslationCache();
    const sql = largeSql(3, 100 * 1024 - 40);
    const key = translationKey('e', 1, 0, sql);
    const translation = translationOf(largeSql(3, 1000 * 1024));
    cache.set(key, translation);
    assert.equal(cache.get(key), translation);
    assert.ok(cache.bytes >= Buffer.byteLength(key) + Buffer.byteLength(translation.sql));
  });
});
