"""Text columns that hold numbers, as a local table's are checked (``check_text=True`` in
:func:`kbench.datasets.tabular.frame_to_raw`): a stray value among numbers, a number too
large for a float64, numbers written with a thousands separator, a decimal comma or a percent
sign; each refusal names the column, the row and the value."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kbench.spec import shown


def check_text_numbers(frame: pd.DataFrame, features: list[str], target: str | None,
                       source: str) -> list[str]:
    """Refuse a text column that holds numbers but also a stray value, in one line naming the
    column, the row (counted from 0, the header not counted) and the value. Returns the text
    columns whose every value is a number (integers beyond 64 bits, which pandas reads as
    text), for the caller to read as numbers.

    The rule: a column of text (object or string dtype) *holds numbers* when more than half
    of its non-missing values parse as numbers (``pd.to_numeric``: ``1.5``, ``-3``, ``1e5``,
    ``inf``). In a feature column that holds numbers, a value that is not a number
    (``oops``) is an error; in any column that holds numbers (the target too), so is a value
    that parses as a number but overflows float64 (``1e400``, a 400-digit integer). A column
    where at most half the values are numbers is categorical, as before. Columns declared
    categorical are not passed here; a target mixing numbers and text is ``check_raw``'s
    error (it names a text value and its row)."""
    all_numbers = []
    for name in features + ([target] if target is not None else []):
        column = frame[name]
        if not (column.dtype == object or isinstance(column.dtype, pd.StringDtype)):
            continue
        present = column.notna().to_numpy()
        text = column[present].astype(str)
        values, overflow = parse_numbers(text)
        # overflowing values too: they are numbers, written too large
        numbers = values.notna().to_numpy()
        if numbers.sum() * 2 <= numbers.size:
            _refuse_formatted_numbers(text, name, source)
            continue  # text: a categorical column
        rows = np.flatnonzero(present)
        if overflow.any():
            raise overflow_error(source, name, int(rows[np.argmax(overflow)]),
                                 text.iloc[int(np.argmax(overflow))])
        if numbers.all():
            all_numbers.append(name)
        if name == target or numbers.all():
            continue
        stray, count = int(np.argmax(~numbers)), int((~numbers).sum())
        raise ValueError(
            f"{source}: column {name!r} holds numbers, but row {int(rows[stray])} holds "
            f"{shown(str(text.iloc[stray]))} ({count} of its {numbers.size} values "
            f"{'is not a number' if count == 1 else 'are not numbers'}); fix the value (a missing "
            "value is an empty field or NA), or declare the column categorical with "
            f"categorical={name}.")
    return all_numbers


def _refuse_formatted_numbers(text: pd.Series, name: str, source: str) -> None:
    """A text column most of whose values are numbers written with a thousands separator, a
    decimal comma or a percent sign (``12,345``, ``0,5``, ``5.0%``), which would be read as
    categories: an error naming an example."""
    plain = (text.str.strip().str.replace(r"(?<=\d)[,' ](?=\d{3}\b)|%$", "", regex=True)
             .str.replace(",", "."))
    formatted = (pd.to_numeric(plain, errors="coerce").notna().to_numpy()
                 & (plain != text.str.strip()).to_numpy())
    if formatted.sum() * 2 > formatted.size:
        example = text.iloc[int(np.argmax(formatted))]
        raise ValueError(f"{source}: column {name!r} holds numbers written as text "
                         f"({shown(str(example))}: a thousands separator, a decimal comma or a "
                         "percent sign); write plain numbers (12345.6, 0.05), or declare the "
                         f"column categorical with categorical={name}.")


def parse_numbers(text: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Text values as floats (NaN where a value is not a number), and where a value is a
    number too large for a float64 (``1e400``: pandas reads it as infinity; a written
    ``inf``/``infinity`` is not an overflow)."""
    values = pd.to_numeric(text, errors="coerce")
    written = text.str.strip().str.lstrip("+-").str.lower().isin(("inf", "infinity")).to_numpy()
    return values, (np.isinf(values.to_numpy(dtype=float, na_value=np.nan)) & ~written)


def overflow_error(source: str, column: str, row: int, value: str) -> ValueError:
    """The error of a number too large for a float64, naming where it is."""
    return ValueError(f"{source}: column {column!r}, row {row}: {shown(str(value))} is a number "
                      "too large for a float64 (magnitude above 1.8e308); fix the value.")
