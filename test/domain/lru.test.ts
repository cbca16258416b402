import { describe, expect, test } from 'bun:test';
import { Lru } from '../../src/domain/lru.ts';

describe('Lru', () => {
  test('keeps at most its capacity, evicting the least recently used entry', () => {
    const cache = new Lru<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now more recent than b
    cache.set('c', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c')]).toEqual([1, 3]);
  });

  test('setting an existing key replaces its value without growing', () => {
    const cache = new Lru<string, number>(2);
    cache.set('a', 1);
    cache.set('a', 2);
    expect([cache.get('a'), cache.size]).toEqual([2, 1]);
  });

  test('delete forgets an entry', () => {
    const cache = new Lru<string, number>(2);
    cache.set('a', 1);
    cache.delete('a');
    expect([cache.get('a'), cache.size]).toEqual([undefined, 0]);
  });

  test('refuses a capacity that is not a positive integer', () => {
    expect(() => new Lru(0)).toThrow(RangeError);
    expect(() => new Lru(1.5)).toThrow(RangeError);
  });
});
