/** A promise that never settles: what a step returns once its run is suspended (docs/rules.md, rule 11b). */
export const never = <T>(): Promise<T> => new Promise<T>(() => {});
