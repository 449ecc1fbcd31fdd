#!/usr/bin/env python3
"""Derives Stripe's API object shapes from the stripe-node SDK's TypeScript declarations.

Usage: scripts/stripe-shapes.py [STRIPE_PACKAGE_DIR] [--out PATH] [--depth N]

STRIPE_PACKAGE_DIR is an installed `stripe` npm package (default /tmp/snode/node_modules/stripe,
else ./node_modules/stripe). Stripe generates those declarations from its OpenAPI spec, so they
describe the current object shapes; the package's OPENAPI_VERSION file names the spec version.
Standard library only. Regenerate the test fixture with:

    npm install --prefix /tmp/snode stripe@23.1.0
    python3 scripts/stripe-shapes.py /tmp/snode/node_modules/stripe \
        --depth 3 --out crates/tender-server/tests/fixtures/stripe-shapes.json

For every wanted interface the output records each field declared directly in its body as
`{"optional", "nullable", "kind", ["enum"], "ts"}`:

- optional: declared with `?`; nullable: the type union contains `null`;
- kind: string | number | boolean | object | array | string_or_object (an expandable id such as
  `string | Customer | null`) | any (mixed unions, `void`, `any`, `unknown`);
- enum: the string literals when the type (after dropping `null`) is a union of string literals,
  directly or through a named type alias such as `PaymentIntent.Status`. stripe-node appends
  `| OtherString` to generated enums to accept values added later; that member is dropped here;
- ts: the declared type text, whitespace collapsed.

Wire-format notes: `Decimal` (the SDK's parsed form of `format: decimal` strings, for example
`unit_amount_decimal`) is recorded as kind "string", which is how the API sends it; `Metadata`,
`ApiList<...>` and other imported interfaces are kind "object".

Nested interfaces of the resource's own namespace that a field refers to (directly, in a union or
as `Array<...>` items) are recorded too, as "PaymentIntent.NextAction" and so on, down to --depth
levels below the resource (default 1), plus the extra names in EXTRA_NESTED.

Special cases: stripe-node declares `type Event = <union of ~250 per-type events>`, each extending
`interface EventBase`; "Event" is recorded from EventBase (the subtypes only narrow `type` and
`data.object`). The test clock is `TestClock` in resources/TestHelpers/TestClocks.d.ts, exposed by
the SDK as `Stripe.TestHelpers.TestClock`, and recorded under that name. The error object is
`type StripeRawError = {...}` in Types.d.ts; the fields stripe-node adds from the HTTP response
(SDK_ONLY_ERROR_FIELDS) are left out because they are not part of the API's error body.
"""
import argparse
import json
import os
import re
import sys

DEFAULT_PACKAGES = ["/tmp/snode/node_modules/stripe", "node_modules/stripe"]

# (output name, declaration file relative to cjs/, declared name, prefix for nested names)
WANTED = [
    ("Balance", "resources/Balance.d.ts", "Balance", ""),
    ("BalanceTransaction", "resources/BalanceTransactions.d.ts", "BalanceTransaction", ""),
    ("Charge", "resources/Charges.d.ts", "Charge", ""),
    ("Checkout.Session", "resources/Checkout/Sessions.d.ts", "Session", "Checkout."),
    ("Customer", "resources/Customers.d.ts", "Customer", ""),
    ("DeletedCustomer", "resources/Customers.d.ts", "DeletedCustomer", ""),
    ("DeletedProduct", "resources/Products.d.ts", "DeletedProduct", ""),
    ("DeletedWebhookEndpoint", "resources/WebhookEndpoints.d.ts", "DeletedWebhookEndpoint", ""),
    ("Dispute", "resources/Disputes.d.ts", "Dispute", ""),
    ("Event", "resources/Events.d.ts", "EventBase", ""),
    ("Invoice", "resources/Invoices.d.ts", "Invoice", ""),
    ("LineItem", "resources/LineItems.d.ts", "LineItem", ""),
    ("PaymentIntent", "resources/PaymentIntents.d.ts", "PaymentIntent", ""),
    ("PaymentLink", "resources/PaymentLinks.d.ts", "PaymentLink", ""),
    ("PaymentMethod", "resources/PaymentMethods.d.ts", "PaymentMethod", ""),
    ("Payout", "resources/Payouts.d.ts", "Payout", ""),
    ("Price", "resources/Prices.d.ts", "Price", ""),
    ("Product", "resources/Products.d.ts", "Product", ""),
    ("Refund", "resources/Refunds.d.ts", "Refund", ""),
    ("SetupIntent", "resources/SetupIntents.d.ts", "SetupIntent", ""),
    ("StripeRawError", "Types.d.ts", "StripeRawError", ""),
    ("Subscription", "resources/Subscriptions.d.ts", "Subscription", ""),
    ("SubscriptionItem", "resources/SubscriptionItems.d.ts", "SubscriptionItem", ""),
    ("TestHelpers.DeletedTestClock", "resources/TestHelpers/TestClocks.d.ts", "DeletedTestClock",
     "TestHelpers."),
    ("TestHelpers.TestClock", "resources/TestHelpers/TestClocks.d.ts", "TestClock", "TestHelpers."),
    ("WebhookEndpoint", "resources/WebhookEndpoints.d.ts", "WebhookEndpoint", ""),
]

# Nested interfaces wanted beyond --depth, by their declared (unprefixed) qualified name.
EXTRA_NESTED = ["Charge.PaymentMethodDetails.Card"]

# Fields stripe-node adds to StripeRawError from the HTTP exchange; not in the API's error body.
SDK_ONLY_ERROR_FIELDS = {"headers", "statusCode", "requestId", "detail", "exception"}

# Named types that are strings on the wire.
STRING_NAMES = {"string", "OtherString", "Decimal"}
OPEN_ENUM_NAMES = {"OtherString"}

OPEN = "{([<"
CLOSE = "})]>"


def strip_comments(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan(text, pos, stop, angles=False):
    """Index of the first character in `stop` at bracket depth 0 from pos (len(text) if none).

    Skips string literals; counts <> only when `angles` (ignoring the `>` of `=>`)."""
    depth = 0
    i, n = pos, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if depth == 0 and c in stop:
            return i
        if c in "{([" or (angles and c == "<"):
            depth += 1
        elif c in "})]" or (angles and c == ">" and text[i - 1] != "="):
            depth -= 1
            if depth < 0:
                return i
        i += 1
    return n


def matching(text, pos):
    """Index just after the bracket that closes the one at pos."""
    end = scan(text, pos + 1, "")
    return end + 1


def split_top(text, sep):
    parts, pos = [], 0
    while True:
        end = scan(text, pos, sep, angles=True)
        parts.append(text[pos:end].strip())
        if end >= len(text):
            return [p for p in parts if p]
        pos = end + 1


def norm(text):
    return re.sub(r"\s+", " ", text).strip()


class Scope:
    def __init__(self, path, module):
        self.path = path  # list of namespace names
        self.module = module
        self.interfaces = {}  # name -> (body text, extends text)
        self.types = {}  # name -> type text
        self.namespaces = {}  # name -> Scope
        self.parent = None

    def child(self, name):
        if name not in self.namespaces:
            s = Scope(self.path + [name], self.module)
            s.parent = self
            self.namespaces[name] = s
        return self.namespaces[name]


DECL = re.compile(
    r"(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?"
    r"(import|interface|namespace|module|type|class|enum|const|let|var|function|export)\b")
NAME = re.compile(r"\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)")


class Module:
    def __init__(self, path, loader):
        self.path = path
        self.loader = loader
        self.imports = {}  # local name -> (module path, exported name)
        self.top = Scope([], self)
        text = strip_comments(open(path, encoding="utf-8").read())
        self.parse_block(text, 0, self.top)

    def parse_block(self, text, pos, scope):
        n = len(text)
        while True:
            while pos < n and (text[pos].isspace() or text[pos] == ";"):
                pos += 1
            if pos >= n:
                return pos
            if text[pos] == "}":
                return pos + 1
            m = DECL.match(text, pos)
            if not m:
                pos = self.skip_statement(text, pos)
                continue
            kw = m.group(1)
            after = m.end()
            if kw in ("import", "export"):
                end = scan(text, after, ";")
                self.record_import(text[pos:end])
                pos = end + 1
            elif kw == "interface":
                name = NAME.match(text, after)
                brace = scan(text, name.end(), "{")
                header = text[name.end():brace]
                ext = re.search(r"\bextends\b(.*)$", header, re.S)
                end = matching(text, brace)
                scope.interfaces[name.group(1)] = (text[brace + 1:end - 1],
                                                  norm(ext.group(1)) if ext else "")
                pos = end
            elif kw in ("namespace", "module"):
                name = NAME.match(text, after)
                inner = scope
                for part in name.group(1).split("."):
                    inner = inner.child(part)
                brace = scan(text, name.end(), "{")
                pos = self.parse_block(text, brace + 1, inner)
            elif kw == "type":
                name = NAME.match(text, after)
                eq = scan(text, name.end(), "=")
                end = scan(text, eq + 1, ";")
                scope.types[name.group(1)] = text[eq + 1:end].strip()
                pos = end + 1
            elif kw in ("class", "enum"):
                brace = scan(text, after, "{")
                pos = matching(text, brace)
            else:
                pos = self.skip_statement(text, pos)

    @staticmethod
    def skip_statement(text, pos):
        return scan(text, pos, ";") + 1

    def record_import(self, stmt):
        m = re.search(r"\{(.*)\}\s*from\s*['\"]([^'\"]+)['\"]", stmt, re.S)
        if not m:
            return
        target = os.path.normpath(os.path.join(os.path.dirname(self.path), m.group(2)))
        target = re.sub(r"\.js$", ".d.ts", target)
        for item in m.group(1).split(","):
            item = item.strip()
            if not item or item.startswith("type "):
                item = item[5:].strip() if item.startswith("type ") else item
            if not item:
                continue
            parts = re.split(r"\s+as\s+", item)
            self.imports[parts[-1]] = (target, parts[0])

    def lookup(self, dotted, scope):
        """Resolves a (possibly dotted) type name from scope outwards.

        Returns ("interface", (scope, name)), ("type", (scope, name)) or None."""
        segs = dotted.split(".")
        s = scope
        while s is not None:
            found = self._walk(s, segs)
            if found:
                return found
            if segs[0] in s.namespaces or segs[0] in s.interfaces or segs[0] in s.types:
                return None
            s = s.parent
        if segs[0] in self.imports and len(segs) == 1:
            target, exported = self.imports[segs[0]]
            mod = self.loader(target)
            if mod is not None:
                return mod.lookup(exported, mod.top)
        return None

    @staticmethod
    def _walk(s, segs):
        for seg in segs[:-1]:
            if seg not in s.namespaces:
                return None
            s = s.namespaces[seg]
        last = segs[-1]
        if last in s.interfaces:
            return ("interface", (s, last))
        if last in s.types:
            return ("type", (s, last))
        return None


class Loader:
    def __init__(self):
        self.cache = {}

    def __call__(self, path):
        if path not in self.cache:
            self.cache[path] = Module(path, self) if os.path.exists(path) else None
        return self.cache[path]


def atoms(text, scope, seen=()):
    """The union members of a type as (tag, detail) pairs; tag is one of null, lit, string,
    open, number, boolean, array, object, void, any. Object details carry (scope, name) when
    the object is an interface declared in a namespace of the same declaration file."""
    out = []
    for part in split_top(text, "|"):
        part = part.strip()
        while part.startswith("(") and matching(part, 0) == len(part):
            part = part[1:-1].strip()
        if part == "null":
            out.append(("null", None))
        elif part == "undefined":
            continue
        elif part[0] in "'\"":
            out.append(("lit", part[1:-1]))
        elif part in OPEN_ENUM_NAMES:
            out.append(("open", None))
        elif part in STRING_NAMES:
            out.append(("string", None))
        elif part in ("number", "bigint") or re.fullmatch(r"-?\d+(\.\d+)?", part):
            out.append(("number", None))
        elif part in ("boolean", "true", "false"):
            out.append(("boolean", None))
        elif part == "void":
            out.append(("void", None))
        elif part in ("any", "unknown", "never"):
            out.append(("any", None))
        elif part.startswith("{"):
            out.append(("object", None))
        elif part.endswith("[]"):
            out.append(("array", atoms(part[:-2], scope, seen)))
        else:
            m = re.fullmatch(r"([\w$.]+)\s*(?:<(.*)>)?", part, re.S)
            if not m:
                out.append(("any", None))
                continue
            name, args = m.group(1), m.group(2)
            if name.startswith("Stripe."):
                name = name[len("Stripe."):]
            if name in ("Array", "ReadonlyArray"):
                out.append(("array", atoms(args, scope, seen)))
                continue
            found = None if args else scope.module.lookup(name, scope)
            if found and found[0] == "type" and found[1] not in seen:
                s, tname = found[1]
                out.extend(atoms(s.types[tname], s, seen + (found[1],)))
            elif found and found[0] == "interface":
                s, iname = found[1]
                local = s.module is scope.module and s.path
                out.append(("object", (s, iname) if local else None))
            else:
                out.append(("object", None))
    return out


def describe(text, optional, scope):
    parts = atoms(text, scope)
    tags = [t for t, _ in parts if t != "null"]
    entry = {
        "optional": optional,
        "nullable": any(t == "null" for t, _ in parts),
        "ts": norm(text),
    }
    kinds = set(tags)
    if kinds and kinds <= {"lit", "open"} and "lit" in kinds:
        entry["kind"] = "string"
        entry["enum"] = [d for t, d in parts if t == "lit"]
    elif kinds and kinds <= {"lit", "open", "string"}:
        entry["kind"] = "string"
    elif "object" in kinds and kinds <= {"object", "string", "open"} and kinds != {"object"}:
        entry["kind"] = "string_or_object"
    elif len(kinds) == 1 and kinds <= {"number", "boolean", "array", "object"}:
        entry["kind"] = tags[0]
    else:
        entry["kind"] = "any"
    return entry, nested_refs(parts)


def nested_refs(parts):
    refs = []
    for tag, detail in parts:
        if tag == "object" and detail:
            refs.append(detail)
        elif tag == "array":
            refs.extend(nested_refs(detail))
    return refs


MEMBER = re.compile(r"(?:readonly\s+)?(['\"]?)([\w$]+)\1\s*(\?)?\s*:(.*)$", re.S)


def fields_of(body, scope, module, warn, where, extends=""):
    fields, refs = {}, []
    if extends:
        for base in split_top(extends, ","):
            found = module.lookup(base, scope)
            if found and found[0] == "interface":
                bs, bname = found[1]
                bbody, bext = bs.interfaces[bname]
                bf, br = fields_of(bbody, bs, bs.module, warn, where, bext)
                fields.update(bf)
                refs.extend(br)
            else:
                warn(f"{where}: cannot resolve base interface {base!r}")
    for member in split_top(body, ";"):
        m = MEMBER.match(member)
        if not m:
            warn(f"{where}: skipped member {norm(member)!r}")
            continue
        entry, r = describe(m.group(4), bool(m.group(3)), scope)
        fields[m.group(2)] = entry
        refs.extend(r)
    return fields, refs


def package_info(pkg):
    with open(os.path.join(pkg, "package.json"), encoding="utf-8") as f:
        version = json.load(f)["version"]
    spec = "unknown"
    path = os.path.join(pkg, "OPENAPI_VERSION")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            spec = f.read().strip()
    return version, spec


def build(pkg, depth, warn):
    root = None
    for sub in ("cjs", "esm"):
        if os.path.exists(os.path.join(pkg, sub, "resources")):
            root = os.path.join(pkg, sub)
            break
    if root is None:
        sys.exit(f"stripe-shapes: no cjs/resources or esm/resources declarations under {pkg}")
    loader = Loader()
    interfaces = {}
    missing = []
    for out_name, rel, decl, prefix in WANTED:
        module = loader(os.path.join(root, rel))
        found = module.lookup(decl, module.top) if module else None
        if found is None:
            missing.append(f"{out_name} ({decl} in {rel})")
            continue
        kind, (scope, name) = found
        if kind == "interface":
            body, ext = scope.interfaces[name]
        else:
            body, ext = scope.types[name].strip(), ""
            if not (body.startswith("{") and body.endswith("}")):
                missing.append(f"{out_name} ({decl} in {rel} is not an object type)")
                continue
            body = body[1:-1]
        fields, refs = fields_of(body, scope, module, warn, out_name, ext)
        if out_name == "StripeRawError":
            fields = {k: v for k, v in fields.items() if k not in SDK_ONLY_ERROR_FIELDS}
        interfaces[out_name] = fields
        queue = [(r, 1) for r in refs]
        while queue:
            (s, iname), level = queue.pop(0)
            qual = ".".join(s.path + [iname])
            if level > depth and qual not in EXTRA_NESTED:
                continue
            key = prefix + qual
            if key in interfaces:
                continue
            nbody, next_ = s.interfaces[iname]
            nfields, nrefs = fields_of(nbody, s, s.module, warn, key, next_)
            interfaces[key] = nfields
            queue.extend((r, level + 1) for r in nrefs)
    for name in EXTRA_NESTED:
        if name not in interfaces:
            missing.append(f"{name} (extra nested interface)")
    return interfaces, missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("package", nargs="?", help="installed stripe package directory")
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    ap.add_argument("--depth", type=int, default=1,
                    help="levels of nested interfaces to record below each resource (default 1)")
    args = ap.parse_args()
    pkg = args.package or next((p for p in DEFAULT_PACKAGES if os.path.isdir(p)), None)
    if pkg is None or not os.path.isdir(pkg):
        sys.exit(f"stripe-shapes: stripe package not found ({pkg or ', '.join(DEFAULT_PACKAGES)})")
    version, spec = package_info(pkg)

    def warn(msg):
        print(f"stripe-shapes: warning: {msg}", file=sys.stderr)

    interfaces, missing = build(pkg, args.depth, warn)
    for m in missing:
        warn(f"not found: {m}")
    doc = {
        "source": f"stripe-node {version} TypeScript declarations "
                  f"(generated by Stripe from its OpenAPI spec {spec})",
        "generated_by": "scripts/stripe-shapes.py",
        "interfaces": interfaces,
    }
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"stripe-shapes: wrote {len(interfaces)} interfaces to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
