// emberfx web player: replays a recorded WebGPU trace (runtime/web/trace.py) with the browser's
// WebGPU, so the scene's own WGSL runs on the viewer's GPU. The page (runtime/web/page.py)
// inlines this script and the trace (gzip, base64) in <script id="emberfx-trace">.
//
// window.emberfx: run(k) replays up to step k and pauses; state(name) reads an entity's state
// as engine.state(name) holds it (plain arrays, keyed as there); errors lists WebGPU errors.
(() => {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const api = { ready: null, errors: [], step: 0, frames: 0 };
  window.emberfx = api;

  async function decode(text) {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function say(text) { $("status").textContent = text; }

  // ---- the camera: the page's own orbit camera, as runtime/model/camera.py builds it ----
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
    a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => { const l = Math.hypot(...a); return [a[0] / l, a[1] / l, a[2] / l]; };
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

  function viewProj(cam, eye, aspect) {   // row-major 4x4 of camera.py, and its basis
    const f = norm(sub(cam.target, eye));
    let r = cross(f, cam.up);
    if (Math.hypot(...r) < 1e-9) r = cross(f, [1, 0, 0]);
    r = norm(r);
    const u = cross(r, f);
    const view = [[...r, -dot(r, eye)], [...u, -dot(u, eye)], [-f[0], -f[1], -f[2], dot(f, eye)],
      [0, 0, 0, 1]];
    const t = 1 / (Math.tan(cam.fov_deg * Math.PI / 360) * cam.fit_scale);
    const n = cam.near, fa = cam.far;
    const proj = [[t / aspect, 0, 0, 0], [0, t, 0, 0], [0, 0, fa / (n - fa), n * fa / (n - fa)],
      [0, 0, -1, 0]];
    const m = [0, 1, 2, 3].map((i) => [0, 1, 2, 3].map((j) =>
      proj[i][0] * view[0][j] + proj[i][1] * view[1][j] + proj[i][2] * view[2][j]
      + proj[i][3] * view[3][j]));
    return { m, r, u };
  }

  function invert(m) {   // 4x4 inverse (Gauss-Jordan), row-major
    const a = m.map((row, i) => [...row, ...[0, 1, 2, 3].map((j) => (i === j ? 1 : 0))]);
    for (let c = 0; c < 4; c++) {
      let p = c;
      for (let r = c + 1; r < 4; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
      [a[c], a[p]] = [a[p], a[c]];
      const d = a[c][c];
      for (let j = 0; j < 8; j++) a[c][j] /= d;
      for (let r = 0; r < 4; r++) {
        if (r === c) continue;
        const k = a[r][c];
        for (let j = 0; j < 8; j++) a[r][j] -= k * a[c][j];
      }
    }
    return a.map((row) => row.slice(4));
  }

  function patchFrame(bytes, cam, eye, aspect) {   // common/frame.wgsl's Frame, camera fields
    const out = new Float32Array(bytes.slice().buffer);
    const { m, r, u } = viewProj(cam, eye, aspect);
    const inv = invert(m);
    for (let c = 0; c < 4; c++) for (let row = 0; row < 4; row++) {
      out[c * 4 + row] = m[row][c];          // view_proj, column-major
      out[36 + c * 4 + row] = inv[row][c];   // inverse_view_proj
    }
    out.set([...r, 0], 16); out.set([...u, 0], 20); out.set([...eye, 1], 24);
    return new Uint8Array(out.buffer);
  }

  // ---- replay ----
  async function main() {
    const trace = await decode($("emberfx-trace").textContent);
    api.frames = trace.frames;
    const [w, h] = trace.size;
    const canvas = $("view");
    canvas.width = w; canvas.height = h;
    if (trace.scripted.length) {
      $("note").textContent = `replayed as recorded (scripts): ${trace.scripted.join(", ")}`;
    }
    if (!navigator.gpu) throw new Error("this browser has no WebGPU: the poster shows the scene");
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error("no WebGPU adapter: the poster shows the scene");
    const requiredLimits = {};
    for (const [name, value] of Object.entries(trace.limits)) {
      const key = name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
      if (adapter.limits[key] < value) {
        throw new Error(`this GPU allows ${key} = ${adapter.limits[key]}; the scene needs ${value}`);
      }
      requiredLimits[key] = value;
    }
    const device = await adapter.requestDevice({ requiredLimits });
    device.addEventListener("uncapturederror", (e) => {
      api.errors.push(e.error.message);
      say("WebGPU error: " + e.error.message.split("\n")[0]);
    });
    const blobs = trace.blobs.map((b) => Uint8Array.from(atob(b), (c) => c.charCodeAt(0)));
    const context = canvas.getContext("webgpu");
    context.configure({ device, format: "rgba8unorm", alphaMode: "opaque",
      usage: GPUTextureUsage.COPY_DST | GPUTextureUsage.RENDER_ATTACHMENT });
    let objs = new Map();
    const cam = trace.camera;
    const view = { own: false, moved: false, eye: [...cam.position], target: [...cam.target] };
    const locked = trace.camera_locked.length > 0 || cam.kind !== "perspective";
    if (trace.camera_locked.length) {
      $("note").textContent += ` camera as recorded: ${trace.camera_locked.join(", ")} ` +
        "collide with what it drew";
    }

    const arg = (v) => {
      if (v === null) return undefined;
      if (Array.isArray(v)) return v.map(arg);
      if (typeof v === "object") {
        if ("$" in v) return objs.get(v.$);
        if ("#" in v) return blobs[v["#"]];
        const o = {};
        for (const k in v) o[k] = arg(v[k]);
        return o;
      }
      return v;
    };
    const counts = { passes: 0, bytes: 0 };
    // objects that no command changes: made once, kept when the recording loops
    const KEPT = new Set(["createShaderModule", "createComputePipeline", "createRenderPipeline",
      "createBindGroupLayout", "createPipelineLayout", "createSampler", "getBindGroupLayout"]);
    const kept = new Map();
    function run(ops) {
      for (const [result, target, method, args] of ops) {
        if (KEPT.has(method) && kept.has(result)) { objs.set(result, kept.get(result)); continue; }
        const t = target === 1 ? device : target === 2 ? device.queue : objs.get(target);
        let a = args.map(arg);
        let out;
        if (method === "createBufferWithData") {
          const d = a[0];
          out = device.createBuffer({ label: d.label, usage: d.usage, mappedAtCreation: true,
            size: Math.max(4, Math.ceil(d.data.byteLength / 4) * 4) });
          new Uint8Array(out.getMappedRange()).set(d.data);
          out.unmap();
        } else {
          if (method === "writeBuffer") {
            counts.bytes += a[2].byteLength;
            if (view.own && target === 2 && args[0].$ === trace.frame_buffer && a[1] === 0) {
              a = [a[0], 0, patchFrame(a[2], { ...cam, target: view.target }, view.eye, w / h)];
            }
          }
          if (method === "writeTexture") counts.bytes += a[1].byteLength;
          if (method === "beginComputePass" || method === "beginRenderPass") counts.passes++;
          out = t[method](...a);
        }
        if (result) objs.set(result, out);
        if (KEPT.has(method)) kept.set(result, out);
      }
    }
    function present() {
      const enc = device.createCommandEncoder();
      enc.copyTextureToTexture({ texture: objs.get(trace.output) },
        { texture: context.getCurrentTexture() }, [w, h, 1]);
      device.queue.submit([enc.finish()]);
    }
    function restart() {
      for (const o of objs.values()) if (o && o.destroy && !(o instanceof GPUDevice)) o.destroy();
      objs = new Map();
      run(trace.setup);
      api.step = 0;
    }
    function advance() {   // one recorded step and its draw
      if (api.step >= trace.frames) restart();
      counts.passes = 0; counts.bytes = 0;
      run(trace.steps[api.step]);
      run(trace.draws[api.step]);
      api.step += 1;
      api.last = { passes: counts.passes, bytes: counts.bytes };
      view.moved = false;
    }
    function redraw() {   // the current step drawn again (the camera moved while paused)
      if (api.step > 0) run(trace.draws[api.step - 1]);
      view.moved = false;
    }

    restart();
    const play = { on: true, speed: 1, loop: true, carry: 0, last: performance.now() };
    api.run = async (k) => {
      play.on = false;
      if (k < api.step) restart();
      while (api.step < Math.min(k, trace.frames)) advance();
      present();
      await device.queue.onSubmittedWorkDone();
      return api.step;
    };
    api.state = async (name) => {
      const spec = trace.states[name];
      if (!spec) throw new Error(`no state for '${name}' in this page`);
      const enc = device.createCommandEncoder();
      // the reads of this step's parity (a family alternating two buffers: web/record.py)
      const reads = (spec.parity && spec.parity[String(api.step % 2)]) || spec.reads;
      const staging = reads.map(([buffer, offset, size]) => {
        const padded = Math.ceil(size / 4) * 4;
        const s = device.createBuffer({ size: padded,
          usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        enc.copyBufferToBuffer(objs.get(buffer), offset, s, 0, padded);
        return s;
      });
      device.queue.submit([enc.finish()]);
      const raw = [];
      for (const s of staging) {
        await s.mapAsync(GPUMapMode.READ);
        raw.push(s.getMappedRange().slice(0));
        s.destroy();
      }
      return decodeState(spec, raw);
    };
    api.counts = () => ({ ...api.last });
    api.pixels = async () => {   // the output texture (what the canvas shows) as RGBA rows
      const row = Math.ceil(w * 4 / 256) * 256;
      const s = device.createBuffer({ size: row * h,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const enc = device.createCommandEncoder();
      enc.copyTextureToBuffer({ texture: objs.get(trace.output) },
        { buffer: s, bytesPerRow: row }, [w, h, 1]);
      device.queue.submit([enc.finish()]);
      await s.mapAsync(GPUMapMode.READ);
      const all = new Uint8Array(s.getMappedRange()), out = new Uint8Array(w * h * 4);
      for (let y = 0; y < h; y++) out.set(all.subarray(y * row, y * row + w * 4), y * w * 4);
      s.destroy();
      let text = "";
      for (let i = 0; i < out.length; i += 8192) text += String.fromCharCode(...out.subarray(i, i + 8192));
      return btoa(text);
    };
    say("");

    // ---- controls ----
    $("play").onclick = () => { play.on = !play.on; };
    $("stepbtn").onclick = () => { play.on = false; advance(); present(); };
    api.view = view;
    $("restart").onclick = () => { restart(); present(); };
    $("speed").oninput = (e) => { play.speed = Number(e.target.value); };
    $("loop").onchange = (e) => { play.loop = e.target.checked; };
    $("resetcam").onclick = () => {
      view.own = false; view.moved = true;
      view.eye = [...cam.position]; view.target = [...cam.target];
    };
    let drag = null;
    canvas.addEventListener("pointerdown", (e) => { drag = { x: e.clientX, y: e.clientY,
      pan: e.button !== 0 || e.shiftKey }; canvas.setPointerCapture(e.pointerId); });
    canvas.addEventListener("pointerup", () => { drag = null; });
    canvas.addEventListener("pointermove", (e) => {
      if (!drag || locked) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      view.own = true; view.moved = true;
      const off = sub(view.eye, view.target);
      const dist = Math.hypot(...off);
      if (drag.pan) {
        const { r, u } = viewProj({ ...cam, target: view.target }, view.eye, w / h);
        const s = dist * 2 * Math.tan(cam.fov_deg * Math.PI / 360) / h;
        for (let i = 0; i < 3; i++) {
          const d = (-dx * r[i] + dy * u[i]) * s;
          view.eye[i] += d; view.target[i] += d;
        }
        return;
      }
      let yaw = Math.atan2(off[0], off[2]) - dx / w * 2 * Math.PI;
      let pitch = Math.asin(off[1] / dist) + dy / h * Math.PI;
      pitch = Math.max(-1.5, Math.min(1.5, pitch));
      view.eye = [view.target[0] + dist * Math.cos(pitch) * Math.sin(yaw),
        view.target[1] + dist * Math.sin(pitch), view.target[2] + dist * Math.cos(pitch) * Math.cos(yaw)];
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      if (locked) return;
      view.own = true; view.moved = true;
      const k = Math.pow(1.1, Math.sign(e.deltaY));
      view.eye = view.eye.map((v, i) => view.target[i] + (v - view.target[i]) * k);
    }, { passive: false });

    const frameTime = $("frametime");
    function tick(now) {
      const dt = (now - play.last) / 1000;
      play.last = now;
      if (play.on) {
        play.carry += dt * play.speed;
        let n = 0;
        while (play.carry >= trace.fixed_dt && n < 4) {
          play.carry -= trace.fixed_dt; n++;
          if (api.step >= trace.frames && !play.loop) { play.on = false; break; }
          const t0 = performance.now();
          advance();
          frameTime.textContent = `step ${api.step}/${trace.frames} · ` +
            `${(performance.now() - t0).toFixed(1)} ms to encode · ` +
            `${api.last.passes} passes, ${api.last.bytes} bytes written`;
        }
        if (n === 4) play.carry = 0;
      }
      if (view.moved) redraw();
      present();
      requestAnimationFrame(tick);
    }
    requestAnimationFrame(tick);
    return true;
  }

  function decodeState(spec, raw) {
    const s = spec.shapes;
    const rows = (data, stride, from, width, n) => {
      const f = new Float32Array(data), out = [];
      for (let i = 0; i < n; i++) out.push(Array.from(f.subarray(i * stride + from, i * stride + from + width)));
      return out;
    };
    if (spec.kind === "life") {
      const [hgt, wid] = s.cells;
      const words = new Uint32Array(raw[0]);
      const stride = words.length / hgt;
      const cells = [];
      for (let y = 0; y < hgt; y++) {
        const row = [];
        for (let x = 0; x < wid; x++) row.push(((words[y * stride + (x >> 5)] >>> (x & 31)) & 1) === 1);
        cells.push(row);
      }
      return { cells };
    }
    if (spec.kind === "emitter") {
      const n = s.age[0];
      const f = new Float32Array(raw[0]);
      const age = [], lifetime = [], alive = [];
      for (let i = 0; i < n; i++) {
        age.push(f[i * 8 + 3]); lifetime.push(f[i * 8 + 7]); alive.push(f[i * 8 + 3] < f[i * 8 + 7]);
      }
      return { position: rows(raw[0], 8, 0, 3, n), velocity: rows(raw[0], 8, 4, 3, n),
        age, lifetime, alive };
    }
    if (spec.kind === "grid") {
      const [ny, nx] = s.position;
      const grid = (data) => {
        const flat = rows(data, 4, 0, 3, nx * ny), out = [];
        for (let j = 0; j < ny; j++) out.push(flat.slice(j * nx, (j + 1) * nx));
        return out;
      };
      return { position: grid(raw[0]), velocity: grid(raw[1]) };
    }
    throw new Error(`no decoder for ${spec.kind}`);
  }

  api.ready = main().catch((e) => {
    api.failed = String(e.message || e);
    say(api.failed);
    $("poster").style.display = "block";
    $("view").style.display = "none";
    return false;
  });
})();
