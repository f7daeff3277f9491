// kubernetes_manifests.mjs NODE_MODULES KUSTOMIZATION_DIR... — validate the
// manifests of deploy/kubernetes offline against the Kubernetes API's
// OpenAPI schemas, as the npm package kubernetes-models ships them (one
// validator per kind: types, required fields, enums, formats), and strictly
// (the API server's strict field validation): every field named must exist
// in its object's type (read from the package's TypeScript declarations),
// so a misspelt field (hostPid, readonly) fails instead of being dropped.
//
// Each KUSTOMIZATION_DIR is rendered as kustomize would for what
// deploy/kubernetes uses (resources: files and directories, namespace,
// images, patches: strategic merge patches of maps) and every object it
// yields is validated.  Prints one line per object; exit 0 when all are
// valid, 1 otherwise (each error on its own line), 2 on a broken set-up.
import { createRequire } from "node:module";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const [nm, ...dirs] = process.argv.slice(2);
if (!nm || !dirs.length) {
	console.error("usage: kubernetes_manifests.mjs NODE_MODULES KUSTOMIZATION_DIR...");
	process.exit(2);
}
const require = createRequire(join(resolve(nm), "x.js"));
const YAML = require("yaml");
const models = join(resolve(nm), "kubernetes-models");
let errors = 0;
const bad = (where, msg) => { errors++; console.log(`  INVALID ${where}: ${msg}`); };

// ---- strict fields: the interface of each type, from its .d.ts
const ifaces = new Map();   // file -> { props: Map(name -> type text), imports: Map(name -> file) } | null
function readIface(file) {
	if (ifaces.has(file)) return ifaces.get(file);
	let r = null;
	if (existsSync(file)) {
		const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
		const imports = new Map();
		for (const m of text.matchAll(/import \{ (\w+) \} from "([^"]+)";/g)) {
			const p = m[2].startsWith(".") ? join(dirname(file), m[2]) : join(resolve(nm), m[2]);
			imports.set(m[1], p.replace(/\.js$/, "") + ".d.ts");
		}
		const start = text.search(/export interface \w+[^{]*\{/);
		if (start >= 0) {
			const props = new Map();
			let depth = 0, cur = null, type = "";
			for (const line of text.slice(text.indexOf("{", start)).split("\n")) {
				const before = depth;
				for (const c of line) depth += c === "{" ? 1 : c === "}" ? -1 : 0;
				const pm = before === 1 && line.match(/^\s*"([^"]+)"\??: (.*)$/);
				if (pm) { cur = pm[1]; type = pm[2]; }
				else if (cur) type += " " + line.trim();
				if (cur && depth === 1 && type.trim().endsWith(";")) { props.set(cur, type.trim().replace(/;$/, "")); cur = null; }
				if (depth === 0 && before > 0) break;
			}
			r = { props, imports };
		}
	}
	ifaces.set(file, r);
	return r;
}
function strict(obj, file, where) {
	const t = readIface(file);
	if (!t || obj === null || typeof obj !== "object" || Array.isArray(obj)) return;
	for (const [k, v] of Object.entries(obj)) {
		if (!t.props.has(k)) { bad(where, `unknown field "${k}" (not in ${file.replace(/.*node_modules\//, "")})`); continue; }
		checkType(v, t.props.get(k), t.imports, `${where}.${k}`);
	}
}
function checkType(v, type, imports, where) {
	let m;
	if ((m = type.match(/^Array<(\w+)>$/))) {
		if (Array.isArray(v) && imports.has(m[1])) v.forEach((e, i) => strict(e, imports.get(m[1]), `${where}[${i}]`));
	} else if ((m = type.match(/^\{ \[key: string\]: (\w+);? \}$/))) {
		if (v && typeof v === "object" && imports.has(m[1])) for (const [k, e] of Object.entries(v)) strict(e, imports.get(m[1]), `${where}.${k}`);
	} else if (imports.has(type)) {
		strict(v, imports.get(type), where);
	}
}

// ---- kustomize, the part deploy/kubernetes uses
const KEYS = new Set(["apiVersion", "kind", "namespace", "resources", "images", "patches", "labels", "commonAnnotations"]);
function merge(a, b) {   // strategic merge of maps (lists replaced)
	if (!b || typeof b !== "object" || Array.isArray(b) || !a || typeof a !== "object" || Array.isArray(a)) return b;
	const r = { ...a };
	for (const [k, v] of Object.entries(b)) r[k] = k in a ? merge(a[k], v) : v;
	return r;
}
function render(dir) {
	const kf = join(dir, "kustomization.yaml");
	if (!existsSync(kf)) { bad(dir, "no kustomization.yaml"); return []; }
	const k = YAML.parse(readFileSync(kf, "utf8"));
	if (k.apiVersion !== "kustomize.config.k8s.io/v1beta1" || k.kind !== "Kustomization") bad(kf, "not a kustomize.config.k8s.io/v1beta1 Kustomization");
	for (const key of Object.keys(k)) if (!KEYS.has(key)) bad(kf, `a field this check does not know: "${key}"`);
	let objs = [];
	for (const r of k.resources || []) {
		const p = join(dir, r);
		if (!existsSync(p)) { bad(kf, `resource ${r} does not exist`); continue; }
		if (statSync(p).isDirectory()) objs.push(...render(p));
		else for (const d of YAML.parseAllDocuments(readFileSync(p, "utf8"))) {
			if (d.errors.length) { bad(p, d.errors[0].message); continue; }
			const o = d.toJS();
			if (o) objs.push({ obj: o, from: p });
		}
	}
	for (const p of k.patches || []) {
		const pf = join(dir, p.path || "");
		if (!p.path || !existsSync(pf)) { bad(kf, `patch ${p.path} does not exist`); continue; }
		const patch = YAML.parse(readFileSync(pf, "utf8"));
		const hits = objs.filter((o) => (!p.target?.kind || o.obj.kind === p.target.kind) && (!p.target?.name || o.obj.metadata?.name === p.target.name));
		if (!hits.length) bad(pf, "the patch's target matches no object");
		for (const h of hits) { h.obj = merge(h.obj, patch); h.from += ` + ${pf}`; }
	}
	for (const o of objs) {
		if (k.namespace && o.obj.kind !== "Namespace") o.obj.metadata = { ...o.obj.metadata, namespace: k.namespace };
		for (const im of k.images || [])
			for (const c of o.obj.spec?.template?.spec?.containers || [])
				if (c.image === im.name || c.image.startsWith(im.name + ":"))
					c.image = `${im.newName || im.name}:${im.newTag || "latest"}`;
	}
	return objs;
}

for (const dir of dirs) {
	console.log(`${dir}:`);
	for (const { obj, from } of render(resolve(dir))) {
		const where = `${obj.kind}/${obj.metadata?.name} (${from.replace(resolve(dir) + "/", "")})`;
		const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
		const js = join(models, group, version, `${obj.kind}.js`);
		if (!existsSync(js)) { bad(where, `no schema for ${obj.apiVersion} ${obj.kind}`); continue; }
		const before = errors;
		try {
			const mod = await import(js);
			new mod[obj.kind](obj).validate();
		} catch (e) {
			bad(where, e.message.split("\n").slice(0, 8).join("; "));
		}
		strict(obj, js.replace(/\.js$/, ".d.ts"), obj.kind);
		if (errors === before) console.log(`  valid ${where}`);
	}
}
process.exit(errors ? 1 : 0);
