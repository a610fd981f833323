/**
 * The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), as published, with the two
 * departures of his own reference implementation (`bli` → `ble`, `logi` → `log`). Input: one lowercased word of
 * a–z; anything else is returned unchanged. Output is a stem, not always a word ("generate" → "gener").
 */

/** Plural-looking words whose "singular" would be another word. */
const EXCEPTIONS = new Map([
  ['news', 'news'],
  ['series', 'series'],
  ['species', 'species'],
]);

export function porterStem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  const exception = EXCEPTIONS.get(word);
  if (exception) return exception;
  let w = word;

  const cons = (s: string, i: number): boolean => {
    const c = s[i];
    if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
    if (c === 'y') return i === 0 ? true : !cons(s, i - 1);
    return true;
  };
  /** m: the number of vowel-consonant sequences in s. */
  const measure = (s: string): number => {
    let n = 0;
    let i = 0;
    const len = s.length;
    while (i < len && cons(s, i)) i++;
    while (i < len) {
      while (i < len && !cons(s, i)) i++;
      if (i >= len) break;
      while (i < len && cons(s, i)) i++;
      n++;
    }
    return n;
  };
  const hasVowel = (s: string): boolean => {
    for (let i = 0; i < s.length; i++) if (!cons(s, i)) return true;
    return false;
  };
  const doubleCons = (s: string): boolean => s.length >= 2 && s[s.length - 1] === s[s.length - 2] && cons(s, s.length - 1);
  /** *o: ends consonant-vowel-consonant, the last not w, x or y. */
  const cvc = (s: string): boolean => {
    const n = s.length;
    if (n < 3 || !cons(s, n - 1) || cons(s, n - 2) || !cons(s, n - 3)) return false;
    const c = s[n - 1];
    return c !== 'w' && c !== 'x' && c !== 'y';
  };
  const replace = (suffix: string, by: string, minM: number): boolean | undefined => {
    if (!w.endsWith(suffix)) return undefined;
    const stem = w.slice(0, w.length - suffix.length);
    if (measure(stem) > minM) {
      w = stem + by;
      return true;
    }
    return false;
  };

  // Step 1a
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (w.endsWith('ss')) {
    /* unchanged */
  } else if (w.endsWith('s')) w = w.slice(0, -1);

  // Step 1b
  let step1bExtra = false;
  if (w.endsWith('eed')) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else if (w.endsWith('ed') && hasVowel(w.slice(0, -2))) {
    w = w.slice(0, -2);
    step1bExtra = true;
  } else if (w.endsWith('ing') && hasVowel(w.slice(0, -3))) {
    w = w.slice(0, -3);
    step1bExtra = true;
  }
  if (step1bExtra) {
    if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
    else if (doubleCons(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
    else if (measure(w) === 1 && cvc(w)) w += 'e';
  }

  // Step 1c
  if (w.endsWith('y') && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + 'i';

  // Step 2
  for (const [suffix, by] of STEP2) if (replace(suffix, by, 0) !== undefined) break;
  // Step 3
  for (const [suffix, by] of STEP3) if (replace(suffix, by, 0) !== undefined) break;
  // Step 4
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (measure(stem) > 1 && (suffix !== 'ion' || /[st]$/.test(stem))) w = stem;
    break;
  }
  // Step 5a
  if (w.endsWith('e')) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !cvc(stem))) w = stem;
  }
  // Step 5b
  if (w.endsWith('ll') && measure(w) > 1) w = w.slice(0, -1);
  return w;
}

const STEP2: [string, string][] = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
];

const STEP3: [string, string][] = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
];

const STEP4 = ['ement', 'ment', 'ance', 'ence', 'able', 'ible', 'ant', 'ent', 'ion', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'al', 'er', 'ic', 'ou'];
