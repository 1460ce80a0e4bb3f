// Remembered results of a pure function of a text, for texts that come back (a statement's text, a request's base URL).
// At most `max` are held, and no more than the memos' share of the memory budget (memory-budget.ts): when full the
// memory is emptied and fills again from the texts still in use, which costs less per call than keeping an order of use.
import { EmptiedMap } from './memory-budget.ts';

export function memoize<T>(max: number, compute: (text: string) => T): (text: string) => T {
  const results = new EmptiedMap<T>(max);
  return (text) => {
    let result = results.get(text);
    if (result === undefined) {
      result = compute(text);
      results.set(text, result);
    }
    return result;
  };
}
