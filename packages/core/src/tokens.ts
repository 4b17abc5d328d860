/** Estimates how many tokens a text costs a model. Must never under-estimate much. */
export type TokenEstimator = (text: string) => number;

/**
 * The default conservative estimate: UTF-8 bytes divided by 3, rounded up. Real tokenizers give
 * about 4 bytes a token for English and code, so this over-estimates on purpose (budgets reserve
 * before work and must not be surprised).
 */
export const estimateTokens: TokenEstimator = (text) => Math.ceil(Buffer.byteLength(text, "utf8") / 3);
