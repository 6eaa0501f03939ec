// The Google Fonts stylesheets the create-next-app layouts ask for (Geist and Geist Mono), for
// machines that cannot reach fonts.googleapis.com. Next.js reads this file when
// NEXT_FONT_GOOGLE_MOCKED_RESPONSES names it (its own switch for its font tests): the key is the
// stylesheet URL, the value the CSS Google would answer. The font files are fetched for real,
// from the local server at DURABLE_E2E_FONT_ORIGIN (fixture-app.ts starts it).
const origin = process.env.DURABLE_E2E_FONT_ORIGIN || "http://127.0.0.1:9";

const face = (family) => `/* latin */
@font-face {
  font-family: '${family}';
  font-style: normal;
  font-weight: 100 900;
  font-display: swap;
  src: url(${origin}/${family.replace(" ", "-")}.woff2) format('woff2');
  unicode-range: U+0000-00FF, U+0131, U+0152-0153, U+02BB-02BC, U+02C6, U+02DA, U+02DC, U+2000-206F;
}
`;

module.exports = {
  "https://fonts.googleapis.com/css2?family=Geist:wght@100..900&display=swap": face("Geist"),
  "https://fonts.googleapis.com/css2?family=Geist+Mono:wght@100..900&display=swap": face("Geist Mono"),
};
