// Remembered results of a pure function of a text, for texts that come back (a statement's text, a request's base URL).
// At most `max` are held: when full the memory is emptied and fills again from the texts still in use, which costs
// less per call than keeping an order of use.

export function memoize<T>(max: number, compute: (text: string) => T): (text: string) => T {
  const results = new Map<string, T>();
  return (text) => {
    let result = results.get(text);
    if (result === undefined) {
      result = compute(text);
      if (results.size >= max) results.clear();
      results.set(text, result);
    }
    return result;
  };
}
