"""Routing: which servers a query goes to, by case-insensitive regex rules.

Order and modes:

- Enabled rules are tried by ``priority`` (higher first), ties in file order.
- A rule with ``query_class`` set only applies to queries of that class
  (:func:`tributary.engine.query.kinds.classify_query`); its pattern must also match.
- ``mode: first`` — the first matching rule decides; ``mode: all`` — the union of the
  servers of every matching rule, in rule order.
- Nothing matched (or the matched rules name only disabled/unknown servers): the
  ``routing.fallback`` servers, or every enabled server when no fallback is set.
- ``sources_override`` (a request naming its sources) bypasses the rules.

Weights: ``decision.weights[s]`` is the *effective* weight of each routed server:
its configured ``weight`` times the rule factor. The factor is the rule's
``weights[s]`` (1.0 if the rule does not set one); when several matching rules set a
factor for the same server (``mode: all``) the largest wins — a specific rule's emphasis
should not be diluted by a generic rule that also matched, and multiplying would
compound across overlapping rules. Fusion should use these weights as they are.
The strategy is that of the highest-priority matching rule that sets one (None: the
configured default).

Every enabled or named server that is not asked appears in ``skipped`` with the reason.
Patterns are compiled by RE2 (:mod:`tributary.engine.config.patterns`), which matches in time linear in
the query whatever the pattern, so routing is fast and never raises, whatever the query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tributary.engine.config.patterns import check_pattern, safe_compile
from tributary.engine.config.schema import Config, RoutingRule
from tributary.engine.config.validate import BUILTIN_SERVER_NAMES
from tributary.engine.model import RouteDecision
from tributary.engine.query.kinds import classify_query

SKIP_DISABLED = "disabled"
SKIP_UNKNOWN = "unknown server"
# A built-in server a rule may name before it exists: it is added with the first repository.
SKIP_NOT_SET_UP = "built in: it starts once a repository is added"
SKIP_NOT_SELECTED = "not selected by the request"
SKIP_NOT_IN_FALLBACK = "not in the fallback"


def _ordered_rules(rules: Sequence[RoutingRule]) -> list[tuple[int, RoutingRule]]:
    return sorted(enumerate(rules), key=lambda pair: (-pair[1].priority, pair[0]))


def _rule_matches(rule: RoutingRule, text: str, query_class: str) -> bool:
    if not rule.enabled or (rule.query_class is not None and rule.query_class != query_class):
        return False
    pattern = safe_compile(rule.pattern)
    return pattern is not None and pattern.search(text) is not None


def _not_in(names: Sequence[str]) -> str:
    quoted = ", ".join(f"'{name}'" for name in names)
    return f"not in rule {quoted}" if len(names) == 1 else f"not in rules {quoted}"


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def route(
    config: Config,
    query: str,
    *,
    sources_override: Sequence[str] | None = None,
    query_class: str | None = None,
) -> RouteDecision:
    """Decide which servers answer ``query`` (see the module docstring)."""
    klass = query_class if query_class is not None else classify_query(query)
    decision = RouteDecision(query_class=klass)
    if sources_override is not None:
        _select(config, decision, _unique(sources_override), SKIP_NOT_SELECTED, {})
        return decision
    matched = [rule for _, rule in _ordered_rules(config.routing.rules) if _rule_matches(rule, query, klass)]
    if config.routing.mode == "first":
        matched = matched[:1]
    decision.matched_rules = [rule.name for rule in matched]
    factors: dict[str, float] = {}
    for rule in matched:
        for name, factor in rule.weights.items():
            factors[name] = max(factor, factors.get(name, factor))
    wanted = _unique(name for rule in matched for name in rule.servers)
    decision.strategy = next((rule.strategy for rule in matched if rule.strategy), None)
    _select(config, decision, wanted, _not_in(decision.matched_rules), factors)
    if decision.servers:
        return decision
    decision.fallback = True
    fallback = config.routing.fallback
    if fallback is None:
        wanted = [s.name for s in config.enabled_servers()]
        _select(config, decision, wanted, SKIP_NOT_IN_FALLBACK, {})
    else:
        _select(config, decision, _unique(fallback), SKIP_NOT_IN_FALLBACK, {})
    return decision


def _select(
    config: Config,
    decision: RouteDecision,
    wanted: Sequence[str],
    other_reason: str,
    factors: dict[str, float],
) -> None:
    """Fill servers, weights and skip reasons for asking ``wanted``."""
    decision.servers = []
    decision.weights = {}
    # unknown names from an earlier pass (a rule naming one) stay listed as unknown
    for name in wanted:
        server = config.servers.get(name)
        if server is None:
            decision.skipped[name] = SKIP_NOT_SET_UP if name in BUILTIN_SERVER_NAMES else SKIP_UNKNOWN
        elif not server.enabled:
            decision.skipped[name] = SKIP_DISABLED
        else:
            decision.servers.append(name)
            decision.weights[name] = server.weight * factors.get(name, 1.0)
            decision.skipped.pop(name, None)
    for name, server in config.servers.items():
        if name in decision.servers:
            continue
        decision.skipped[name] = SKIP_DISABLED if not server.enabled else other_reason


@dataclass(slots=True)
class RuleTrace:
    """How one rule fared against a query, for the GUI's rule tester."""

    name: str
    pattern: str
    priority: int
    position: int  # 0-based order in which rules are tried
    status: str  # matched | no match | disabled | other class | invalid pattern
    span: tuple[int, int] | None = None  # the matched text's offsets in the query
    matched_text: str | None = None
    error: str | None = None
    used: bool = False  # contributed servers to the decision
    servers: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RoutingExplanation:
    query_class: str
    rules: list[RuleTrace]
    decision: RouteDecision


def explain_routing(config: Config, query: str, *, query_class: str | None = None) -> RoutingExplanation:
    """Every rule, in the order tried, with whether and where it matched, plus the
    decision :func:`route` makes for the same query."""
    klass = query_class if query_class is not None else classify_query(query)
    decision = route(config, query, query_class=klass)
    traces: list[RuleTrace] = []
    for position, (_, rule) in enumerate(_ordered_rules(config.routing.rules)):
        trace = RuleTrace(rule.name, rule.pattern, rule.priority, position, "no match", servers=list(rule.servers))
        error = check_pattern(rule.pattern)
        pattern = safe_compile(rule.pattern)
        if not rule.enabled:
            trace.status = "disabled"
        elif error is not None or pattern is None:
            trace.status, trace.error = "invalid pattern", error
        elif rule.query_class is not None and rule.query_class != klass:
            trace.status = "other class"
            trace.error = f"applies to {rule.query_class} queries; this one is {klass}"
        else:
            match = pattern.search(query)
            if match is not None:
                trace.status, trace.span, trace.matched_text = "matched", match.span(), match.group(0)
        trace.used = trace.status == "matched" and rule.name in decision.matched_rules
        traces.append(trace)
    return RoutingExplanation(klass, traces, decision)
