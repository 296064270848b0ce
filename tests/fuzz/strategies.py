"""Shared hypothesis strategies: awkward values of every JSON/YAML type."""

from __future__ import annotations

from hypothesis import strategies as st

# Text with the characters that break things: control characters, brackets, YAML syntax, long runs.
awkward_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from(list("ab [pause=0.5]trp\x00\x07\n\t:&*<>{}-#'\"|!%@`~\u200b\ud7ff")), max_size=40),
    st.sampled_from(["", " ", "...", "[trp]", "[pause=1e308]", "[pause=nan]", "x" * 5000, "yes", "null", "<<"]),
)
numbers = st.one_of(st.integers(min_value=-10**12, max_value=10**12), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, -0.0, 1e308, -1e308, 1e-320, 2**63, True, False]))
scalars = st.one_of(st.none(), st.booleans(), numbers, awkward_text)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(awkward_text, inner, max_size=4)),
                           max_leaves=12)
