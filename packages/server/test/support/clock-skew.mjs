// Preloaded into a server process (NODE_OPTIONS=--import …) by tests that need a machine whose clock is wrong:
// Date (new Date() and Date.now()) runs SIGNALBOX_TEST_CLOCK_SKEW_MS ahead (negative: behind). Timers and
// performance.now() are left alone, as a skewed wall clock leaves them.
const skew = Number(process.env.SIGNALBOX_TEST_CLOCK_SKEW_MS ?? 0);
if (skew) {
  const RealDate = Date;
  const realNow = RealDate.now;
  class SkewedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(realNow() + skew);
      else super(...args);
    }
    static now() {
      return realNow() + skew;
    }
  }
  globalThis.Date = SkewedDate;
}
