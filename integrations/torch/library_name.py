"""The names convgen gives a library, for Python that puts one into paths
and C++ source (convgen_torch.load()). No dependency beyond the standard
library."""
import re

# The names convgen refuses as a library name (generator/src/spec.cpp,
# kReservedWords: the keywords of C and C++, and the namespaces C++
# reserves); tests/tools/test_library_names.py checks that the two agree.
RESERVED_LIBRARY_NAMES = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t char8_t class
    co_await co_return co_yield compl concept const const_cast consteval constexpr constinit continue decltype
    default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
    int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast struct switch
    template this thread_local throw true try typedef typeid typename typeof typeof_unqual union unsigned using
    virtual void volatile wchar_t while xor xor_eq std posix""".split())


def check_library_name(library):
    """Raises ValueError unless `library` is a name convgen gives a library:
    a C identifier of at most 64 characters, neither a C or C++ keyword nor
    reserved (std, posix, '_' and a capital letter, '__' anywhere): the rule
    of convgen's spec reader. Raised before the name reaches a path or C++
    source, so nothing else can."""
    if not isinstance(library, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", library):
        raise ValueError(f"convgen_torch: library name {library!r} must be a C identifier (letters, digits, '_'; "
                         "not starting with a digit) of at most 64 characters")
    if library in RESERVED_LIBRARY_NAMES or "__" in library or re.match(r"_[A-Z]", library):
        raise ValueError(f"convgen_torch: library name {library!r} is a C or C++ keyword or reserved (std, posix, "
                         "'_' and a capital letter, '__' anywhere); convgen names no library so")
