// Debian's Chromium, headless, driven by playwright-core: what the browser tests launch.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const WIDE = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };
