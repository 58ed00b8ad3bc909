// Drives the page of `roofline ui` in headless Chromium and writes what it shows as JSON:
//   node page.mjs URL OUT.json SHOT.png BATCH CHIP CONFIG.json
// loads the page, sets the batch to BATCH, then the chip to CHIP, then uploads CONFIG.json as
// the model, and after each step records
// the operator table (each cell's data-value), the plot's points (their SVG positions) and
// its axis ticks, the address, and the requests the page made; then clicks the first point for
// its derivation and takes a screenshot. The Rust test (ui_browser.rs) compares all of it with
// `roofline analyze --format json`.
import { chromium } from 'playwright-core';
import { writeFileSync } from 'node:fs';

const [url, outPath, shotPath, batch, chip, config] = process.argv.slice(2);
if (!config) {
  console.error('usage: node page.mjs URL OUT.json SHOT.png BATCH CHIP CONFIG.json');
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const result = { steps: [], console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  page.on('console', (m) => result.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => result.console.push(`pageerror: ${e.message}`));
  const analyzeRequests = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/analyze') analyzeRequests.push(r.postData());
  });

  const settled = async (generation) => {
    await page.waitForSelector(`body[data-generation="${generation}"]`, { timeout: 30000 });
    // Any request still in flight would show in the count below.
    await page.waitForTimeout(200);
  };

  const snapshot = async (name) => {
    const shown = await page.evaluate(() => {
      const rows = [...document.querySelectorAll('#ops tbody tr')].map((tr) => {
        const row = {};
        for (const td of tr.querySelectorAll('td[data-field]')) {
          if (td.dataset.value !== undefined) row[td.dataset.field] = td.dataset.value;
        }
        row.text = tr.innerText;
        return row;
      });
      const points = [...document.querySelectorAll('#roofline circle.op[data-op]')].map((c) => ({
        op: c.dataset.op,
        stage: c.dataset.stage,
        cx: Number(c.getAttribute('cx')),
        cy: Number(c.getAttribute('cy')),
      }));
      const ticks = (axis) => [...document.querySelectorAll(`#roofline g.tick.${axis}`)].map((g) => ({
        value: Number(g.dataset.value),
        pos: Number(axis === 'x' ? g.querySelector('line').getAttribute('x1') : g.querySelector('line').getAttribute('y1')),
        label: g.querySelector('text').textContent,
      }));
      const labels = [...document.querySelectorAll('#roofline .axis-label')].map((t) => t.textContent);
      return {
        state: document.body.dataset.state,
        elapsed_ms: Number(document.body.dataset.elapsedMs),
        title: document.getElementById('title').textContent,
        error: document.getElementById('error').hidden ? null : document.getElementById('error').innerText,
        rows, points, x_ticks: ticks('x'), y_ticks: ticks('y'), axis_labels: labels,
        roofs: [...document.querySelectorAll('#roofline path.roof')].map((p) => Number(p.dataset.peak)),
      };
    });
    result.steps.push({ name, url: page.url(), analyze_requests: analyzeRequests.length, ...shown });
  };

  await page.goto(url);
  await settled(1);
  await snapshot('load');

  // Typed, then Tab: the input's `change`, as a person makes it.
  await page.fill('#batch', batch);
  await page.press('#batch', 'Tab');
  await settled(2);
  await snapshot('batch');

  await page.selectOption('#hardware', chip);
  await settled(3);
  await snapshot('chip');
  result.last_request = JSON.parse(analyzeRequests[analyzeRequests.length - 1]);

  // A click on a point (the last drawn, on top of any it overlaps): its derivation.
  const first = page.locator('#roofline circle.op[data-op]').last();
  const op = await first.getAttribute('data-op');
  await first.click();
  await page.waitForSelector(`body[data-explained="${op}"]`, { timeout: 30000 });
  result.explained = { op, text: await page.locator('#explain').textContent() };
  result.analyze_requests_after_click = analyzeRequests.length;

  // A shared address restores the settings: a fresh page at the same address.
  const again = await browser.newPage();
  await again.goto(page.url());
  await again.waitForSelector('body[data-generation="1"]', { timeout: 30000 });
  result.restored = await again.evaluate(() => ({
    batch: document.getElementById('batch').value,
    hardware: document.getElementById('hardware').value,
  }));
  await again.close();

  await page.locator('#explain').evaluate((e) => e.scrollTo(0, 0));
  result.before_screenshot = { batch: await page.inputValue('#batch'), url: page.url() };
  await page.screenshot({ path: shotPath, fullPage: true });

  // A config.json chosen in the page: read there, sent inline.
  await page.setInputFiles('#upload', config);
  await settled(4);
  await snapshot('upload');
} catch (e) {
  result.failure = String(e.stack || e);
  process.exitCode = 1;
} finally {
  await browser.close();
  writeFileSync(outPath, JSON.stringify(result, null, 2));
}
