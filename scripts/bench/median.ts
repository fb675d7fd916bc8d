/** The middle value of the bench's rounds (the upper one of an even count). */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
