import assert from 'node:assert/strict';
import { generateKey, hashKey } from '../../src/auth/keys.js';
import { testDatabase } from '../support/db.js';

describe('API key storage', () => {
  it('when a key is created, then only its SHA-256 hash and a short prefix are stored, never the key', async () => {
    const { context, pool } = await testDatabase();
    const key = generateKey();
    const record = await context.keys.create('hash-test', key, ['query']);
    const { rows } = await pool.query('SELECT * FROM api_keys WHERE id = $1', [record.id]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].key_hash, hashKey(key));
    assert.equal(rows[0].prefix, key.slice(0, 6));
    const everything = JSON.stringify((await pool.query('SELECT * FROM api_keys')).rows);
    assert.ok(!everything.includes(key), 'the plaintext key is nowhere in the table');
    assert.deepEqual((await context.keys.findByKey(key))?.id, record.id);
    assert.equal(await context.keys.findByKey(key + 'x'), undefined);
  });
});
