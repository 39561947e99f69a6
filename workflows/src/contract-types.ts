/** What an activity answers: the awaited result of the API function it runs. */
export type Answer<F extends (...args: any[]) => unknown> = Promise<Awaited<ReturnType<F>>>;
