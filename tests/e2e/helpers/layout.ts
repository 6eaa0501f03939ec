// What a reader would see as broken at a width, read in the page: the checks every dashboard page
// test (dashboard, operations-dashboard, composition-dashboard, events-timeline) makes at 390 and
// 1280 px.
import type { Page } from "playwright-core";

/**
 * What a reader would see as broken at this width: the page scrolling sideways, a box whose
 * content is cut off or scrolls sideways (overflow other than visible, content wider than the box),
 * and text sticking out of its card or panel.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const name = (el: Element) =>
      `<${el.tagName.toLowerCase()} class="${el.getAttribute("class") ?? ""}"> ` +
      `"${(el.textContent ?? "").trim().slice(0, 50)}"`;
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth)
      found.push(`the page is ${root.scrollWidth} px wide in a ${window.innerWidth} px window`);
    for (const el of document.querySelectorAll("body *")) {
      const style = getComputedStyle(el);
      if (style.display === "none" || style.overflowX === "visible") continue;
      if (el.scrollWidth > el.clientWidth + 1)
        found.push(`${name(el)} cuts its content: ${el.scrollWidth} px in ${el.clientWidth} px`);
    }
    const range = document.createRange();
    for (const card of document.querySelectorAll(".stat, .stack-table tr, .panel, .demo-card, .json, .run-head")) {
      const box = card.getBoundingClientRect();
      const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        if (!text.textContent?.trim()) continue;
        range.selectNodeContents(text);
        const r = range.getBoundingClientRect();
        if (r.width === 0) continue; // not rendered (display: none)
        if (r.left < box.left - 1 || r.right > box.right + 1)
          found.push(`"${text.textContent.trim().slice(0, 50)}" sticks out of ${name(card).slice(0, 90)}`);
      }
    }
    // JsonOutput puts each piece of a long string between slashes in its own text node: one of
    // those (no white space in it) on two lines is a URL cut mid-token.
    for (const pre of document.querySelectorAll(".json")) {
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        if (/\s/.test(text.textContent ?? "")) continue;
        range.selectNodeContents(text);
        if (range.getClientRects().length > 1) found.push(`"${text.textContent}" is cut across two lines`);
      }
    }
    return found;
  });
}
