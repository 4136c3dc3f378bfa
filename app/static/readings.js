// One answer per question about NaN: every place that shows an engine's output says which reading it shows,
// the specification (a dialect's documented text, computed on NumPy) or an observed engine. The API names the
// reading applied (CompareOutput.reading, a finding's or witness's `reading`; null is the dialect's default);
// the names below are the readings that record what an engine was measured or reported to compute.

const OBSERVED = {
  observed: 'observed engine (TensorRT)',
  chromium: 'observed engine (Chromium)',
  xnnpack: 'observed engine (XNNPACK)',
  builtin: 'observed engine (TFLite builtin kernels)',
};

/** 'specification', 'specification, 2022-doc reading' or 'observed engine (...)' for a reading name or null. */
export function readingLabel(reading) {
  if (!reading) return 'specification';
  return OBSERVED[reading] || `specification, ${reading} reading`;
}

/** The label of engines that really ran (diff, fix): named with their versions. */
export function observedLabel(engines) {
  return `observed engines: ${engines.join(' and ')}`;
}
