// Opens a tally trace (Chrome trace-event JSON) in Chromium's own trace
// viewer, the Performance panel of its bundled DevTools (trace_app.html:
// Debian's Chromium ships no chrome://tracing), unfolds the process and its
// Queue track, and saves a PNG. Run by trace_viewer_picture.sh; not part of
// the build or the tests.
//   node trace_viewer_picture.js TRACE.json OUT.png
const { chromium } = require('playwright-core');

const [trace, out] = process.argv.slice(2);
const WIDTH = 1200;

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 1000 } });
  await page.goto('devtools://devtools/bundled/trace_app.html');
  await page.waitForTimeout(2500);
  // Without a page to debug it says the connection closed: drop that dialog.
  await page.keyboard.press('Escape');
  await page.evaluate(() => document.querySelectorAll('dialog, .glass-pane').forEach(d => d.remove()));
  await page.getByText('Performance', { exact: true }).first().click({ force: true });
  await page.waitForTimeout(1000);
  await page.locator('input[type=file]').first().setInputFiles(trace);
  await page.waitForTimeout(4000);
  // Positions in the flame chart's canvas (no DOM to click there).
  await page.keyboard.press('Escape'); // the keyboard-shortcuts popup
  const sidebar = page.getByRole('button', { name: /sidebar/i }).first();
  await sidebar.click({ force: true });
  await page.waitForTimeout(1000);
  await page.mouse.click(10, 129);         // unfold the process
  await page.waitForTimeout(500);
  await page.mouse.click(20, 146);         // unfold the Queue track
  await page.mouse.move(WIDTH / 2, 650);   // no tooltip over the tracks
  await page.waitForTimeout(1000);
  await page.screenshot({ path: out, clip: { x: 0, y: 0, width: WIDTH, height: Number(process.env.HEIGHT || 400) } });
  await browser.close();
})();
