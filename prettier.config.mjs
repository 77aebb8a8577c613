// Prettier, set to the house style as the code was written (issue #35), so that the format pass changed as
// few lines as possible: single quotes, 120 columns, trailing commas everywhere, semicolons, `(x) =>`.
// quoteProps 'preserve': a few objects quote every key on purpose (HTTP headers, names beside quoted ones).
/** @type {import('prettier').Config} */
export default {
  singleQuote: true,
  printWidth: 120,
  trailingComma: 'all',
  quoteProps: 'preserve',
};
