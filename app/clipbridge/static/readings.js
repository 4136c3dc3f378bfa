// One answer per question about NaN: every place that shows an engine's output says what it shows, the
// specification (a dialect's documented operator, every dialect's default, computed on NumPy), an observed engine
// (a reading that records what an engine was reported or measured to compute, asked for with `reading` or
// `"basis": "engine"`) or an engine run. The API says it as data: `shows` on each /v1/execute and /v1/compare
// output ("specification", "observed-engine", "engine") and on each meaning ("specification" or the reading's
// name); `reading` names the reading applied (a finding's or witness's `reading`; null is the default).
// Imported by any module here that labels an output (a leaf: it imports nothing).

// Readings that record an engine rather than a document, for where no `shows` came with the reading (findings).
const OBSERVED = {
  observed: 'observed engine (TensorRT)',
  chromium: 'observed engine (Chromium)',
  builtin: 'observed engine (TFLite builtin kernels)',
};

/** The label of what an output shows: from `shows` when the API sent it, else from the reading's name.
 * 'specification', 'specification, 2022-doc reading', 'observed engine (...)' or 'engine run'. */
export function readingLabel(reading, shows) {
  if (shows === 'engine') return 'engine run';
  if (shows === 'observed-engine') return OBSERVED[reading] || `observed engine${reading ? ` (${reading})` : ''}`;
  if (!reading) return 'specification';
  if (shows === 'specification') return `specification, ${reading} reading`;
  return OBSERVED[reading] || `specification, ${reading} reading`;
}

/** The label of a meaning (a spec card): its `shows`, "specification" or the name of the reading it is. */
export function meaningLabel(meaning) {
  const shows = meaning && meaning.shows;
  if (!shows || shows === 'specification') return 'Specification';
  return OBSERVED[shows] ? `${OBSERVED[shows][0].toUpperCase()}${OBSERVED[shows].slice(1)}` : `${shows} reading`;
}

/** The label of engines that really ran (diff, fix): named with their versions. */
export function observedLabel(engines) {
  return `observed engines: ${engines.join(' and ')}`;
}
