// Debian's Chromium, headless, driven by playwright-core: what the browser tests launch.
import type { Page } from "playwright-core";

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

/**
 * The errors a page throws or prints (console errors), collected as they come; `expected` names
 * console errors a test causes on purpose (a reload cutting a stream) and leaves out.
 */
export function watchProblems(page: Page, expected?: RegExp): string[] {
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !expected?.test(m.text())) problems.push(`console error: ${m.text()}`);
  });
  return problems;
}
