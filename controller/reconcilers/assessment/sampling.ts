/** Sampling is a pure rule on api types that the judge reads too: it lives in api/sampling.ts. */
export {
  sample,
  sampleRun,
  sampleValue,
  samplingConfig,
  samplingInputFor,
  type SamplingConfig,
  type SamplingDecision,
  type SamplingInput,
  type SamplingReason,
} from '../../api/sampling.js';
