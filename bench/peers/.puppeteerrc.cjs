// Puppeteer (pulled in by the benchmark's peer tools) must never download a browser: the
// benchmark drives Debian's Chromium, and the closed network refuses the download anyway.
module.exports = { skipDownload: true };
