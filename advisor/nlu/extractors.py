"""Named slot extractors: one small function per slot, listed in :data:`EXTRACTORS`.

Each reads the cleaned message (``text``), the same text with catalog names blanked (``masked``, so
"4090" is not read as a number) and what was found so far; it returns the slot's value or None. The
vocabulary comes from ``data/cues.toml`` via :mod:`advisor.nlu.vocab`; exact forms (numbers with
units, catalog names) stay as patterns here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor import ascii_re as re
from advisor.nlu import vocab
from advisor.numbers import NUMBER_RE, parse_number
from knowledge import AmbiguousNameError
from knowledge.catalog import Catalog
from knowledge.codes import strictest_code
from knowledge.names import VENDORS

_I = re.IGNORECASE
N = NUMBER_RE


@dataclass(frozen=True)
class Context:
    text: str
    masked: str
    catalog: Catalog
    gpu_spans: tuple[tuple[int, int, str], ...]  # (start, end, gpu id) of the GPU names in the message


Extractor = Callable[[Context], Any]

_WATTS = re.compile(rf"({N})\s*(kw|w|watts?|瓦|千瓦)(?![a-z])", _I)


_TIMES_AFTER = re.compile(r"^\s*(?:ddr[45]\w*|ecc|rdimm|psus?|电源|titanium|platinum|\s)*\s*[x×*]\s*(\d{1,2})(?!\d)",
                          _I)
_TIMES_BEFORE = re.compile(r"(?<![\d.])(\d{1,2})\s*(?:[x×*]|张|块|个|条|根|片)\s*$", _I)  # '4x 200G', '4 张 200G'
_REDUNDANT = re.compile(r"冗余|redundan\w*|\b(\d)\s*\+\s*(\d)\b", _I)


def times_written(text: str, start: int, end: int) -> int:
    """How many of an item a list line writes beside it ('64G DDR5 ×16', '4x 2700W', '2700W ×4'), else 1."""
    m = _TIMES_AFTER.match(text[end:end + 24]) or _TIMES_BEFORE.search(text[max(0, start - 6):start])
    return int(m.group(1)) if m and 1 <= int(m.group(1)) <= 32 else 1


def _usable_psus(count: int, window: str) -> int:
    """Of ``count`` PSUs, those that carry load: all, or the N of 'N+M' / half when said redundant."""
    m = _REDUNDANT.search(window)
    if m is None or count == 1:
        return count
    if m.group(1):
        return max(1, min(count, int(m.group(1))))
    return max(1, count // 2)


def psu_watts(ctx: Context) -> float | None:
    """'1000W 电源', '850W PSU', 'a 1600 watt power supply' → the PSU rating in W; a quote's '2700W ×4（冗余）' is
    the load the PSUs carry together (redundant ones counted once)."""
    psu = vocab.cue("slot", "psu")
    if psu is None:
        return None
    m: re.Match[str] | None
    for m in _WATTS.finditer(ctx.masked):
        window = ctx.masked[max(0, m.start() - 14):m.end() + 16]
        value = parse_number(m.group(1))
        if value is None or not psu.search(window) or CARD_POWER_AFTER.match(ctx.masked[m.end():m.end() + 12]):
            continue
        if m.group(2).lower() in ("kw", "千瓦"):
            value *= 1000
        if 200 <= value <= 20_000:
            count = times_written(ctx.masked, m.start(), m.end())
            return value * _usable_psus(count, ctx.masked[m.start():m.end() + 24])
    if psu.search(ctx.masked):  # 'What PSU do I need …? Is a 1600W unit enough?'
        m = re.search(rf"({N})\s*(?:w|watts?)\s+(?:unit|one|model|supply)\b", ctx.masked, _I)
        value = parse_number(m.group(1)) if m else None
        if value and 200 <= value <= 20_000:
            return value
    m = re.search(rf"(psu|power supply|电源)\D{{0,8}}({N})\s*(w|watts?|瓦)?(?![a-z0-9])", ctx.masked, _I)
    if m and not CARD_POWER_AFTER.match(ctx.masked[m.end():m.end() + 12]):
        value = parse_number(m.group(2))
        if value and 200 <= value <= 20_000:
            return value
    return _the_only_watts(ctx) if psu.search(ctx.masked) else None


_NOT_PSU_WATTS = re.compile(r"wall|limit|circuit|outlet|cap\b|under|below|至多|以内|以下|不超过|墙|插座|限|tdp|每张|"
                            r"per card", _I)


def _the_only_watts(ctx: Context) -> float | None:
    """'what PSU do I need … my current one is 850w': the message is about the PSU and says one wattage, tied
    to nothing else (no wall, limit or card power beside it): that is the PSU's."""
    found = [m for m in _WATTS.finditer(ctx.masked) if m.group(2).lower() not in ("kw", "千瓦")]
    if len(found) != 1:
        return None
    m = found[0]
    value = parse_number(m.group(1))
    around = ctx.masked[max(0, m.start() - 24):m.end() + 16]
    if value is None or not 300 <= value <= 3_000 or _NOT_PSU_WATTS.search(around) \
            or CARD_POWER_AFTER.match(ctx.masked[m.end():m.end() + 12]):
        return None
    return value


CARD_POWER_AFTER = re.compile(r"[\s\-]*(?:的)?\s*(?:cards?|gpus?|显卡|卡|tdp)", _I)  # '450W card': a card's power


_DESKTOP_CPU = re.compile(r"(?<![a-z0-9])((?:ryzen\s*[3579]\s*)?\d{4}x3d|(?:ryzen\s*[3579]\s*)?\d{4}x|"
                          r"(?:i[3579][- ]?)?1[2-4]\d{3}k[fs]?|(?:i[3579][- ]?)\d{4,5}[a-z]{0,2}|"
                          r"(?:core )?ultra\s*[579]\s*\d{3}k?)(?![a-z0-9])", _I)
_DUAL_SOCKET = re.compile(r"双路|两路|(?:两|双|2)\s*颗|dual[- ]socket|2p\b|two[- ]socket|2\s*x\s*(?:epyc|xeon)|"
                          r"(?:dual|two) (?:amd |intel )?(?:epyc|xeon)", _I)


def _platform_id(ctx: Context, name: str) -> str | None:
    try:
        hit = ctx.catalog.platform_resolver.find(name)
    except AmbiguousNameError:
        return None
    return hit.id if hit else None


def cpu_platform(ctx: Context) -> str | None:
    """A catalog CPU platform named in the message ('7950X', 'EPYC 9654', '双路 EPYC' → the 2-socket one)."""
    dual = _DUAL_SOCKET.search(ctx.text) is not None
    runs = re.findall(r"[A-Za-z0-9][A-Za-z0-9+\-]*(?:\s+[A-Za-z0-9][A-Za-z0-9+\-]*)*", ctx.masked)
    for phrase in runs:  # every window of a run of words, the longest first ('a ryzen 9 7950x', not 'ryzen 9')
        words = phrase.split()
        for width in range(min(3, len(words)), 0, -1):
            for i in range(len(words) - width + 1):
                cand = " ".join(words[i:i + width])
                if re.fullmatch(r"\d{1,3}|[a-z]{1,3}", cand, _I):
                    continue
                pid = _platform_id(ctx, cand)
                if pid:
                    return _socket_variant(ctx, pid, dual)
    for cand in re.findall(r"[\u4e00-\u9fff]{2,4}\s*\d{3,4}[A-Za-z]*", ctx.text):
        pid = _platform_id(ctx, cand) or _platform_id(ctx, cand.replace(" ", ""))
        if pid:
            return _socket_variant(ctx, pid, dual)
    if re.search(r"epyc|霄龙", ctx.text, _I):
        return "epyc-9004-2p" if dual else "epyc-9004-1p"
    if re.search(r"xeon|至强", ctx.text, _I) and dual:
        return "xeon-sapphire-rapids-2p"
    return None


def _socket_variant(ctx: Context, pid: str, dual: bool) -> str:
    if not dual or pid.endswith("-2p"):
        return pid
    twin = pid.removesuffix("-1p") + "-2p"
    return twin if any(p.id == twin for p in ctx.catalog.platforms) else pid


def cpu_name(ctx: Context) -> str | None:
    """A desktop CPU the platform catalog does not know, as written ('7800X3D'): said back, never guessed."""
    m = _DESKTOP_CPU.search(ctx.masked)
    if m and _platform_id(ctx, m.group(1)) is None:
        return m.group(1)
    return None


_NODES = re.compile(rf"({N}|single|two|three|four|eight|sixteen)[\s-]*(?:x\s*)?(?:of\s+(?:the|these|those|our)\s+)?"
                    rf"(?:个|台)?\s*(?:\d+u\s+|gpu\s+)?"
                    rf"(?:(?:hgx|dgx)\s*(?:\s{{2,}})?)?(?:nodes?|节点|"
                    rf"台(?:服务器|机器|主机|整机|工作站|电脑)?|servers|machines|boxes|workstations?|desktops|pcs|"
                    rf"rigs)(?![a-z])", _I)


_CARDS_PER_MACHINE = re.compile(r"\s*[x×]\s{2,}")  # 'N×' then a card's name (blanked)
_N_GPU_BOX = re.compile(r"-\s*(?:gpu|card)s?\b", _I)  # 'N-GPU box': the machine's size
_BOX_NAME = re.compile(r"\s*[x×]\s*[dh]gx\b", _I)  # a DGX / HGX name is a whole machine


_AFTER_MACHINE = re.compile(r"\s*(服务器|机器|主机|节点|[，,。.？?！!]|呢|吧|$|\d+\s*(卡|张|[x×])|"
                            r"[一二两四八]\s*(卡|张))")


# '<machines> <GPUs each> … servers': 'two 8-GPU servers', 'two 8x H100 servers' (the card's name is blanked)
_NODES_OF_N = re.compile(rf"({N}|two|three|four|eight)\s+(?:of\s+(?:the|these|those|our)\s+)?"
                         rf"\d+(?:[\s-]*(?:gpus?|cards?|卡)\b|\s*[x×](?=\s{{2,}}))"
                         rf"[^.,;，。]{{0,24}}?(?:nodes?|servers|machines|boxes)\b", _I)


_ONE_NODE = re.compile(r"\b(?:in|on|to|with|onto|into)?\s*(?:one|a single|single|just one|only one) "
                       r"(?:node|server|machine|box|hgx|dgx)\b|"
                       r"(?:一台|单台|单机|单节点|一个节点)(?=\s*(?:机器|服务器)?\s*(?:够|就|能|行|可以|放|装|跑|训|搞定|的话|呢|吗))",
                       _I)


def nodes(ctx: Context) -> int | None:
    """'两台服务器', '2 nodes', '4 个节点', 'two 8-GPU servers' → machines; 'one node', '一台够不够' → 1; a '台' right
    before a GPU name is a card count, not this."""
    m = _NODES_OF_N.search(ctx.masked)
    if m:
        value = parse_number(m.group(1))
        if value and 1 <= value <= 4096:
            return int(value)
    for m in _NODES.finditer(ctx.masked):
        after = ctx.masked[m.end():m.end() + 6]
        if m.group(0).endswith("台") and not _AFTER_MACHINE.match(after):
            continue
        if _CARDS_PER_MACHINE.match(ctx.masked, m.end(1)) and not _BOX_NAME.match(ctx.text, m.end(1)):
            continue  # '8x A100 node', '8xH100 servers': cards per machine ('4x HGX H100 nodes' counts boxes)
        if _N_GPU_BOX.match(ctx.masked, m.end(1)):
            continue  # 'the 8-GPU boxes', '4-GPU servers': cards per machine, not machines
        value = parse_number(m.group(1))
        if value and 1 <= value <= 4096:
            return int(value)  # 'two of the H100 servers in one rack … for one server': the machines counted
    return 1 if _ONE_NODE.search(ctx.masked) else None


def sharding(ctx: Context) -> str | None:
    """ZeRO stage or FSDP."""
    m = re.search(r"zero[- _]?(?:stage[- _]?)?([123])|deepspeed\s*stage\s*([123])", ctx.text, _I)
    if m:
        return f"zero{m.group(1) or m.group(2)}"
    if re.search(r"\bfsdp\b|fully sharded", ctx.text, _I):
        return "fsdp"
    return None


_NEGATION = re.compile(r"(不|没|无|别|no|not|without|don'?t|off)\W{0,2}\w{0,6}\W{0,2}$", _I)


def grad_checkpointing(ctx: Context) -> bool | None:
    """Gradient (activation) checkpointing on, or off when negated."""
    m = vocab.matches("slot", "grad_checkpointing", ctx.text)
    if not m:
        return None
    return not _NEGATION.search(ctx.text[max(0, m.start() - 12):m.start()])


def has_host(ctx: Context) -> bool | None:
    """'I already own a PC', '已经有主机了': only the cards are to be bought."""
    return True if vocab.matches("slot", "has_host", ctx.text) else None


def home(ctx: Context) -> bool | None:
    """'在家跑', 'for my homelab': a machine at home — a desktop tower, not a server room."""
    return True if vocab.matches("slot", "home", ctx.text) else None


_PUE = re.compile(r"\bpue\s*(?:按|为|是|取|of|is|at|about|around|~|=|:|：)?\s*(?:约|大约|大概)?\s*([123](?:\.\d{1,2})?)"
                  r"(?![\d.])", _I)


def pue(ctx: Context) -> float | None:
    """'PUE 1.5', 'PUE按1.5算': the facility's power usage effectiveness (cooling and losses on the IT load)."""
    m = _PUE.search(ctx.masked)
    value = float(m.group(1)) if m else None
    return value if value is not None and 1.0 <= value <= 3.0 else None


_SUPPLY = re.compile(r"(?<![\d.])(1[02]\d|2[0-4]\d|27[07]|38\d|400|41[05]|4[48]0)\s*(?:v|vac|伏|volts?)(?![a-z])"
                     r"(?:[\s,/-]*(?:ac\b)?(?:[\s,/-]*\d{1,3}\s*(?:a|amps?|安)\b)?[\s,/-]*"
                     r"(?P<three>3[\s-]*(?:phase|ph|φ)\b|three[\s-]*phase|三相)|"
                     r"[\s,/-]*(?P<one>single[\s-]*phase|1[\s-]*(?:phase|ph)\b|单相))?|"
                     r"(?P<three_first>3[\s-]*(?:phase|ph)\b|three[\s-]*phase|三相)\s*(?:电)?\s*(?P<v2>208|38\d|400|415|480)\s*v",
                     _I)


def supply(ctx: Context) -> tuple[float, int] | None:
    """'208V 3 phase', '三相 380V', '230V single phase': the supply's voltage and phases (380–480 V is three-phase
    unless said otherwise)."""
    m = _SUPPLY.search(ctx.masked)
    if m is None:
        return None
    volts = float(m.group(1) or m.group("v2"))
    three = bool(m.group("three") or m.group("three_first")) or (volts >= 380 and not m.group("one"))
    return volts, 3 if three else 1


_RACKS = re.compile(r"(?<![\d.])(\d{1,4})\s*(?:个|台)?\s*(?:这样的?|同样的?)?\s*(?:\d+(?:\.\d+)?\s*kw\s*的?)?\s*"
                    r"(?:机柜|柜子|机架)|(?<![\d.])(\d{1,4})\s+(?:of (?:these|those|our|them)\s+|such\s+)?"
                    r"(?:\d+(?:\.\d+)?\s*kw\s+)?(?:racks|cabinets)\b", _I)


def racks(ctx: Context) -> int | None:
    """'20 个这样 10kW 的柜子', '20 racks of 17 kW': how many racks the nodes fill (two or more)."""
    m = _RACKS.search(ctx.masked)
    value = int(m.group(1) or m.group(2)) if m else None
    return value if value and 2 <= value <= 10_000 else None


def memory_bound(ctx: Context) -> bool | None:
    """'a home-grown CFD solver (memory bw bound)', '访存密集': the code runs at the memory's speed."""
    return True if vocab.matches("slot", "memory_bound", ctx.text) else None


def organisation(ctx: Context) -> bool | None:
    """'我们公司', '课题组', 'our law firm', 'a startup': an organisation buys, with invoices and warranties."""
    return True if vocab.matches("slot", "organisation", ctx.text) else None


def region(ctx: Context) -> str | None:
    """Where the cards will be bought: 'cn' (mainland China, incl. 'can't buy it' / export-control talk) or
    'global' (a place outside mainland China)."""
    if vocab.matches("slot", "region_destination_cn", ctx.text):
        return "cn"  # bought abroad and taken to China: China's side of the export rules applies
    if vocab.matches("slot", "region_global", ctx.text):
        return "global"
    if vocab.matches("slot", "region_cn", ctx.text):
        return "cn"
    return None


def budget_scope(ctx: Context) -> str | None:
    """Whether the money is for the GPUs alone or the whole machine."""
    if vocab.matches("slot", "budget_gpu_only", ctx.text):
        return "gpu_only"
    if vocab.matches("slot", "budget_system", ctx.text):
        return "system"
    return None


# the words for each vendor of knowledge.names.VENDORS, keyed by its name in lower case (as profiles keep it)
_VENDOR_WORDS = {
    "NVIDIA": r"nvidia|英伟达|n卡|老黄|cuda卡",
    "AMD": r"\bamd\b|(?<![a-z])a\s*卡|radeon|instinct",
    "Intel": r"\bintel\b|英特尔|gaudi",
    "Huawei": r"huawei|华为|昇腾|ascend",
    "Cambricon": r"cambricon(?:\s*mlu)?|寒武纪(?:\s*mlu)?|思元",
    "Hygon": r"hygon(?:\s*dcu)?|海光(?:\s*dcu)?",
    "Moore Threads": r"moore ?threads|摩尔线程|摩尔",
    "Biren": r"biren|壁仞",
    "Iluvatar CoreX": r"iluvatar|天数智芯|天数",
    "MetaX": r"metax|沐曦",
    "Kunlunxin": r"kunlunxin|kunlun|昆仑芯|昆仑",
    "Enflame": r"enflame|燧原",
    "T-Head": r"t-?head|平头哥",
    "Apple": r"\bapple\b|苹果|\bmac\b|macbook|mac studio|mac mini",
}
assert set(_VENDOR_WORDS) == set(VENDORS), "every vendor of knowledge.names has its words here"
_VENDORS = {vendor.lower(): words for vendor, words in _VENDOR_WORDS.items()}


def vendors_in(text: str) -> list[str]:
    """The vendors a message names by their own words ('Mac那台', 'the Ascend box'), in knowledge.names spelling."""
    return [vendor for vendor, words in _VENDOR_WORDS.items() if re.search(words, text, _I)]
_EXCLUDE_BEFORE = re.compile(r"(不要|不用|不想用|不考虑|不能|不可以|不许|不准|不得|禁用|禁止|禁|避开|排除|除了|非|"
                             r"买不到|用不了|"
                             r"no|not|n't|cannot|without|avoid|exclude|ban(?:ned|s)?|anything but|except|other than|"
                             r"never)\W{0,3}(?!only\b|just\b|afford|仅|只)"
                             r"([A-Za-z0-9][\w\-]*\W{0,2}|[\u3400-\u9fff]{1,4}\W{0,2})?"
                             r"((or|nor|and|和|或|、)\W{0,2})?$", _I)
_EXCLUDE_AFTER = re.compile(r"^\W{0,3}(is|are|\'s)?\s*(out|excluded|ruled out|off the table|not an option|"
                            r"(not|no longer) (allowed|permitted|available|an option)|banned)\b|"
                            r"^\s*(的\w{0,2})?\s*(也|都)?\s*"
                            r"(不行|不考虑|排除|不要|不用|不能用|不能买|不让|禁用|被禁|买不到|用不了)", _I)


_NAMED_ONLY = re.compile(r"\b(?:name|mention|specify|write|list)\s*$|(?:写|写明|指定|点名|出现)\s*$", _I)


def excluded_vendors(ctx: Context) -> list[str] | None:
    """'no NVIDIA', '不要英伟达的卡' → vendors ruled out."""
    out = []
    for vendor, pattern in _VENDORS.items():
        for m in re.finditer(pattern, ctx.text, _I):
            if _NAMED_ONLY.search(ctx.text[max(0, m.start() - 14):m.start()]):
                continue  # "can't name NVIDIA" in a tender: the brand is not written, the cards are not ruled out
            if _EXCLUDE_BEFORE.search(ctx.text[max(0, m.start() - 14):m.start()]) \
                    or _EXCLUDE_AFTER.search(ctx.text[m.end():m.end() + 20]):
                out.append(vendor)
                break
    return out or None


_LIST_GAP = re.compile(r"^\s*(?:、|,|，|/|和|或者?|还是|与|跟|\band\b|\bor\b|\bvs\.?|\bversus\b)\s*(?:的)?\s*$", _I)
_CHOICE_GAP = re.compile(r"还是|或者?|\bor\b|\bvs\.?|\bversus\b", _I)
_CHOICE_AFTER = re.compile(r"^\W{0,3}(?:之间|里|中|当中|这几家|三家|两家|几家)?\s*"
                           r"(?:怎么选|如何选|选哪|哪家|哪个|哪一?款|还是|对比|比较|"
                           r"\bwhich\b|\bcompared?\b|\bor\b)", _I)


_CHOICE_BEFORE = re.compile(r"(?:怎么选|如何选|选哪|哪家|哪个|哪一?款|对比|比较|\bwhich\b|\bbetween\b|\bcompare\b)"
                            r"[^。.!?！？]{0,6}[:：]?\s*$", _I)  # '选哪个好：昇腾、海光、寒武纪'


def _vendors_chosen_between(text: str, ruled_out: list[str]) -> list[str] | None:
    """'海光、寒武纪、昇腾怎么选', 'Hygon or Ascend?': two or more vendors listed and weighed against each other —
    the choice is among them."""
    hits = sorted((m.start(), m.end(), vendor) for vendor, pattern in _VENDORS.items()
                  for m in re.finditer(pattern, text, _I) if vendor not in ruled_out)
    def weighed(run: list[tuple[int, int, str]]) -> bool:
        gaps = [text[a[1]:b[0]] for a, b in itertools.pairwise(run)]
        return len({v for _, _, v in run}) >= 2 and (
            bool(_CHOICE_AFTER.match(text[run[-1][1]:run[-1][1] + 16])) or any(_CHOICE_GAP.search(g) for g in gaps)
            or bool(_CHOICE_BEFORE.search(text[max(0, run[0][0] - 16):run[0][0]])))

    run: list[tuple[int, int, str]] = []
    for hit in hits:
        if run and not _LIST_GAP.match(text[run[-1][1]:hit[0]]):
            if weighed(run):
                break
            run = []
        run.append(hit)
    return list(dict.fromkeys(v for _, _, v in run)) if weighed(run) else None


def only_vendors(ctx: Context) -> list[str] | None:
    """'只能买华为的卡', 'only NVIDIA', 'LAMMPS on AMD GPUs', '用华为的卡' → the vendors the choice is restricted to."""
    only = vocab.matches("slot", "only", ctx.text)
    ruled_out = excluded_vendors(ctx) or []  # 'domestic accelerators only (no NVIDIA)': NVIDIA is the one ruled out
    if not only and (chosen := _vendors_chosen_between(ctx.text, ruled_out)):
        return chosen
    if not only or not any(re.search(p, ctx.text[only.end():only.end() + 24], _I) for p in _VENDORS.values()):
        # 'AMD only', 'AMD cards only', 'LAMMPS on AMD GPUs', '用华为的卡'
        named = [vendor for vendor, pattern in _VENDORS.items()
                 if re.search(rf"\b(?:on|with|using)\s+(?:{pattern})\s+(?:gpus?|cards?|hardware|accelerators?)\b|"
                              rf"(?:用|上)\s*(?:{pattern})\s*的?\s*(?:卡|显卡|gpu|加速卡)|"
                              rf"(?:{pattern})(?:\s+(?:gpus?|cards?|hardware|accelerators?))?\s*(?:-|\s)only\b",
                              ctx.text, _I) and vendor not in ruled_out]
        return named or None
    tail = ctx.text[only.end():only.end() + 24]
    found = [vendor for vendor, pattern in _VENDORS.items()
             if (m := re.search(pattern, tail, _I)) and not re.search(r"[，,。;；!?！？(（]", tail[:m.start()])
             and vendor not in ruled_out]
    return found or None


def allowed_gpus(ctx: Context) -> list[str] | None:
    """'only L40S or H100', '只能用 910B 和 H20' → the GPUs the choice is restricted to."""
    only = vocab.matches("slot", "only", ctx.text)
    if not only:
        return None
    ids = [gid for start, _, gid in ctx.gpu_spans if start >= only.start() and start - only.end() <= 40
           and not re.search(r"[，,。;；!?！？]|\.(?!\d)", ctx.text[only.end():start])]  # '只有 10A，放 2 张 5090',
    # 'air cooling only. How many H200 …': none
    return list(dict.fromkeys(ids)) or None


_ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("support", r"支持|support"),
    ("china", r"买得到|买不到|能买|还能买|禁运|出口管制|停产|中国|国内|china|export[- ]control|banned|discontinued|"
              r"still (buy|get|available)|end[- ]of[- ]life|\beol\b|still sold|sold new"),
    ("architecture", r"架构|ampere|ada\b|hopper|blackwell|lovelace|architecture|generation|哪一代"),
    ("pcie", r"pcie|接口|x16|x8\b|gen\s*[345]|通道|lanes?"),
    ("link", r"nvlink|互联|卡间|infinity fabric|hccs|interconnect"),
    ("ecc", r"\becc\b|纠错"),
    ("price", r"价格|多少钱|售价|报价|贵|价钱|什么价|啥价|价位|有货|二手价|price|cost|fetch(es)?\b|ebay|"
              r"how much (is|does|are)|go(es)? for|\$|trading at|grey market|gray market|行情|什么价位"),
    ("cooling", r"散热|被动|风扇|涡轮|cooled|cooling|fans?\b|blower"),
    ("cores", r"cuda\s*核心|核心数|cuda cores|\bcores\b|\bsm\b"),
    ("bandwidth", r"带宽|频宽|bandwidth"),
    ("power", r"功耗|功率|tdp|瓦|power|watts?|(几个|多少)\s*w(?![a-z])"),
    ("compute", r"算力|tflops|flops|性能|performance|fp64|fp32|bf16|fp16|fp8|int8"),
    ("layers", r"层数|多少层|layers"),
    ("context", r"上下文|context"),
    ("params", r"参数|激活|params|parameters"),
    ("memory", r"显存|现存|内存|vram|memory|多大(?!\s*(?:的)?\s*(?:容量|功率|电流|空开|电源|ups|机柜|空调|电池))|"
               r"\d\s*gb?(?![a-z0-9])|\bgb\b"),  # '多大容量' of a UPS is no card's memory
    ("specs", r"\bspecs?\b|规格|参数表|datasheet|详细参数"),
)


_FEATURES = ("link", "ecc", "pcie", "cooling", "architecture")
_PRECISION_WORD = re.compile(r"\b(fp8|fp4|fp16|bf16|fp32|fp64|tf32|int8|int4|nvfp4|mxfp4)\b", re.IGNORECASE)


def asked_attribute(ctx: Context) -> str | None:
    """Which fact a spec question asks for ('L40S 显存多大' → memory, 'does the 3090 have NVLink' → link)."""
    found = [(m.start(), name) for name, pattern in _ATTRIBUTES if (m := re.search(pattern, ctx.masked, _I))]
    named = [name for _, name in sorted(found)]
    if named[:1] == ["support"] and not _PRECISION_WORD.search(ctx.masked):  # 'support NVLink' asks about the link
        feature = next((n for n in named if n in _FEATURES), None)
        if feature:
            return feature
    return named[0] if named else None  # the fact asked first ('显存多大？带宽和功耗呢' → memory)


_FOLLOW_ON = ("ecc", "link", "price", "power", "bandwidth", "cooling", "pcie", "architecture", "china")


def more_attributes(ctx: Context) -> list[str] | None:
    """Facts asked after the first ('supports FP8? what about ECC' → ['ecc']): each gets its own line."""
    first = asked_attribute(ctx)
    found = sorted((m.start(), name) for name, pattern in _ATTRIBUTES
                   if name in _FOLLOW_ON and name != first and (m := re.search(pattern, ctx.masked, _I)))
    return [name for _, name in found][:2] or None


_AMPS = re.compile(r"(\d{1,3})\s*(?:a|安|amp|amps)(?![a-z])(?:\s*/?\s*(\d{3})\s*(?:v|伏|volts?)(?![a-z]))?|"
                   r"(\d{3})\s*(?:v|伏)\s*/?\s*(\d{1,3})\s*a(?![a-z])", _I)
_VOLTS = re.compile(r"(?<!\d)(100|110|115|120|127|220|230|240)\s*(?:v|伏|volts?)(?![a-z])", _I)
_USUAL_AMPS = {"100": 15, "110": 15, "115": 15, "120": 15, "127": 15, "220": 10, "230": 16, "240": 13}  # a plain outlet
_OUTLET = re.compile(r"插座|墙插|电路|回路|跳闸|空开|供电|配电|市电|outlet|circuit|breaker|wall|socket|mains|"
                     r"\bfeeds?\b|\bpdus?\b", _I)
# redundant feeds: each one must carry the whole load alone when the other fails ('双路供电', 'A/B feeds')
_REDUNDANT_FEEDS = re.compile(r"双路|双电源|a\s*/\s*b\s*(?:路|feeds?|power)|dual[- ](?:power[- ])?(?:feeds?|pdus?|"
                              r"supply|supplies)|redundant (?:power )?(?:feeds?|pdus?|supply)|\b2n\b", _I)


def redundant_feeds(ctx: Context) -> bool | None:
    """'供电是双路220V 32A', 'dual A/B feeds': the circuits are redundant, so each alone must carry the machine."""
    return True if _REDUNDANT_FEEDS.search(ctx.text) and mains(ctx) else None


_ORDINARY_OUTLET = re.compile(r"\b(?:normal|regular|standard|ordinary|household|office)\s+(?:office\s+|wall\s+)?"
                              r"(?:outlet|circuit|socket|plug)|\bwall (?:outlet|socket|plug)|"
                              r"普通\s*(?:的)?\s*(?:插座|电路|插头|市电)|家用\s*(?:插座|电)|"
                              r"办公室\s*(?:的)?\s*(?:插座|电路)", _I)


def mains(ctx: Context) -> str | None:
    """The wall circuit: '10A 插座' (220 V in Chinese), '15A outlet' (120 V in English), '230V/16A', '120V 15A插座',
    a voltage alone with its usual outlet ('美国120V的电路' → 120 V / 15 A)."""
    m = _AMPS.search(ctx.masked)
    if not _OUTLET.search(ctx.text):
        return None
    if not m:  # a voltage alone ('美国120V的电路'): that country's usual outlet
        v = _VOLTS.search(ctx.masked)
        if v:
            return f"{v.group(1)}v-{_USUAL_AMPS[v.group(1)]}a"
        if _ORDINARY_OUTLET.search(ctx.text):  # 'a normal office circuit', '普通插座': the usual one where they write
            return "220v-10a" if re.search(r"[\u4e00-\u9fff]", ctx.text) else (
                "230v-13a" if re.search(r"£|\buk\b|britain|england", ctx.text, _I) else "120v-15a")
        return None
    amps = int(m.group(1) or m.group(4))
    volts = m.group(2) or m.group(3)
    if volts is None:  # 13, 16, 25, 32 A are 230 V circuits; 15, 20, 30 A North American 120 V ones
        volts = "220" if re.search(r"[\u4e00-\u9fff]", ctx.text) else ("230" if amps in (10, 13, 16, 25, 32, 40, 63)
                                                                        else "120")
    three = _THREE_PHASE.search(ctx.text) and int(volts) >= 200  # '208V 30A three-phase': √3 · V · A per feed
    return f"{volts}v-{amps}a" + ("-3p" if three else "") if 1 <= amps <= 100 else None


_THREE_PHASE = re.compile(r"three[\s-]*phase|\b3[\s-]*(?:phase|ph)\b|三相|3φ", _I)


_CIRCUITS = re.compile(rf"({N}|two|three|four|five|six|两|二|三|四|五|六)\s*(?:x|×|\*|路|个|条)?\s*(?:separate\s+)?"
                       rf"(?:\d{{3}}\s*v\s*/?\s*)?\d{{1,2}}\s*(?:a|amps?|安)\b(?:\s*(?:single[- ]phase|单相))?\s*"
                       rf"(?:circuits?|回路|电路|线路|breakers?|sockets?|outlets?)|"
                       rf"({N}|two|three|four|五|两|二|三|四)\s*(?:路|条|个)\s*(?:\d{{1,2}}\s*a\s*)?"
                       rf"(?:回路|电路|线路)", _I)


def circuits(ctx: Context) -> int | None:
    """'2x 32A single phase circuits', '两路 32A 回路': how many wall circuits of the kind said."""
    m = _CIRCUITS.search(ctx.masked)
    if not m or redundant_feeds(ctx):  # redundant feeds do not add up: one of them must carry it all
        return None
    value = parse_number(m.group(1) or m.group(2))
    return int(value) if value and 1 <= value <= 256 else None


_GPU_LIMIT = re.compile(r"(限功耗|功耗限制|限制功耗|功耗墙|锁功耗|限功率|功率限制|限制功率|限制到|限到|"
                        r"power[- ]?cap\w*|power[- ]?limit\w*|cap(?:ped)?|limit(?:ed)?)\D{0,28}?"
                        rf"({N})\s*(w|瓦|watts?)\b", _I)
_PER_CARD = re.compile(r"每张|每块|每卡|单卡|两张|显卡|卡|per (card|gpu)|each|both|cards|gpus|the gpus", _I)


def gpu_power_limit(ctx: Context) -> float | None:
    """A per-card power limit ('每张限功耗到 250W', 'power limit both cards to 400W')."""
    m = _GPU_LIMIT.search(ctx.masked)
    card_named = m is not None and any(m.start() - 16 <= end <= m.start() for _, end, _ in ctx.gpu_spans)
    if not m or not (card_named or _PER_CARD.search(ctx.text[max(0, m.start() - 12):m.end() + 8])):
        return None  # '把 H100 限功率到 500W': the card named right before it is the one limited
    value = parse_number(m.group(2))
    return value if value and 50 <= value <= 1500 else None


# how a machine runs after a number of hours ('24 小时满负荷', '20 hours at full load'): a duty cycle
DUTY = r"(?:都|全)?\s*(?:满负荷|满载|满跑|不停|不关机|开着|运转|at full load|flat out|non-?stop)"
_HOURS_A_DAY = re.compile(rf"(?:每天|一天|每日|日均)(?:[^\d。；;,，?？]{{0,10}}?|[^。；;,，?？]{{0,14}}?[、和])({N})\s*"
                          rf"(?:个)?\s*"
                          rf"(?:小时|h\b)|"
                          rf"({N})\s*(?:hours?|hrs?|h)\s*(?:a|per|each|/)\s*day|"
                          rf"({N})\s*(?:个)?\s*(?:小时|hours?|hrs?|h)\s*{DUTY}|"
                          rf"(全天|24\s*/\s*7|around the clock|nonstop|全天候)", _I)
# on which days the GPUs run: weekdays, N days a week, N days a month (None: every day)
_DAYS_USED = re.compile(rf"(工作日|weekdays?|work ?days|business days|mon(?:day)?\s*(?:-|–|to|through)\s*fri(?:day)?|"
                        rf"周一到周五)|({N})\s*(?:个)?\s*(?:days?|天)\s*(?:a|per|each|every|/)?\s*(?:week|周|星期)|"
                        rf"(?:每周|一周|每星期)\s*(?:用|跑|开)?\s*({N})\s*天|"
                        rf"({N})\s*(?:个)?\s*(?:days?|天)\s*(?:a|per|each|every|/)\s*(?:month|月)|"
                        rf"(?:每月|一个月|每个月)\s*(?:用|跑|开|训练|训)?\s*({N})\s*天", _I)


_HOURS_A_PERIOD = re.compile(rf"(?:每周|一周|每星期|一星期)\D{{0,6}}?({N})\s*(?:个)?\s*(?:小时|h\b)|"
                             rf"({N})\s*(?:hours?|hrs?|h)\s*(?:a|per|each|/)\s*week|"
                             rf"(?:每月|一个月|每个月|一月)\D{{0,6}}?({N})\s*(?:个)?\s*(?:小时|h\b)|"
                             rf"({N})\s*(?:hours?|hrs?|h)\s*(?:a|per|each|/)\s*month", _I)
_GPU_HOURS_A_MONTH = re.compile(rf"({N})\s*(?:gpu|card)[-\s]*(?:hours?|hrs?|h)\s*(?:a|per|each|/|every)\s*month|"
                                rf"({N})\s*(?:个)?\s*卡时\s*(?:/|每|一)\s*(?:个)?月|"
                                rf"(?:每月|一个月|每个月|月均)\D{{0,6}}?({N})\s*(?:个)?\s*"
                                rf"(?:卡时|gpu[-\s]*(?:hours?|小时))", _I)
_UTILISATION = re.compile(rf"(?:利用率|使用率|占用率|utili[sz]ation|utili[sz]ed|duty cycle|busy)\D{{0,10}}?({N})\s*%|"
                          rf"({N})\s*%\s*(?:的)?\s*(?:利用率|使用率|utili[sz]ation|utili[sz]ed|of the time|duty)", _I)
DAYS_PER_WEEK, DAYS_PER_MONTH = 7.0, 365 / 12


def hours_per_day(ctx: Context) -> float | None:
    """How many hours a day the GPUs are busy: said per day ('每天跑 10 个小时', '4 hours a day', '24/7'), per
    week or month ('20 hrs a week', '一个月 100 小时', as a daily average), or as a utilisation ('利用率 40%')."""
    m = _HOURS_A_DAY.search(ctx.masked)
    if m and m.group(4):
        return 24.0
    value = parse_number(m.group(1) or m.group(2) or m.group(3)) if m else None
    if value and 0 < value <= 24:
        return value
    m = _HOURS_A_PERIOD.search(ctx.masked)
    if m and not _GPU_HOURS_A_MONTH.search(ctx.masked):
        weekly, monthly = m.group(1) or m.group(2), m.group(3) or m.group(4)
        total = parse_number(weekly or monthly or "")
        days = DAYS_PER_WEEK if weekly else DAYS_PER_MONTH
        if total and 0 < total <= 24 * days:
            return round(total / days, 2)
    m = _UTILISATION.search(ctx.masked)
    share = parse_number(m.group(1) or m.group(2)) if m else None
    if share and 0 < share <= 100:
        return round(24 * share / 100, 2)
    if _OFFICE_HOURS.search(ctx.text):  # 'only during office hours': 9 hours on 5 days a week, as a daily average
        return round(OFFICE_HOURS_A_DAY * OFFICE_DAYS_A_WEEK / DAYS_PER_WEEK, 2)
    return None


OFFICE_HOURS_A_DAY, OFFICE_DAYS_A_WEEK = 9, 5
_OFFICE_HOURS = re.compile(r"\b(?:office|business|working|work) hours\b|\b9\s*(?:to|-)\s*5\b|"
                           r"工作时间|上班时间|办公时间|白天上班", _I)


_PURCHASE = re.compile(r"(?:自己买|自购|买(?:一台|一张|台|张|个|套)?|购买|购置|入手|buy(?:ing)?|purchas\w*|"
                       r"used[^,.;!?]{0,24}?\b(?:is|costs?|goes for|sells for)|costs?|priced at)"
                       r"[^，,。;；!?？\n]{0,24}?"
                       r"(?=\s*(?:约|大概|大约|差不多|~|about|around|roughly)?\s*[$¥￥€£]?\s*\d)", _I)


_EACH_AFTER = re.compile(r"^\s*\)?\s*(?:each|apiece|per (?:card|gpu)|a piece|一张|每张|一块|每块|/张|/块)", _I)
_COUNT_X = re.compile(r"(\d+)\s*[x×]\s*|(\d+)\s*(?:张|块)")


def _composed_price(clause: str) -> float | None:
    """'2x H100 PCIe (~$25k each) plus a server (~$15k)': per-card prices times the count said before them,
    and the other amounts of the clause added (a host, a switch) — None when the clause has one amount only."""
    from advisor.numbers import find_money

    amounts = [x for x in find_money(clause) if x.amount >= 50]
    if re.search(r"\beither\b|\bor\b|还是|或者|或是", clause, _I):  # two options to buy: the first one's price
        return None
    if len(amounts) < 2 and not (amounts and _EACH_AFTER.match(clause[amounts[0].end:])):
        return None
    total = 0.0
    for x in amounts:
        count = 1
        if _EACH_AFTER.match(clause[x.end:]):
            said = [int(c.group(1) or c.group(2)) for c in _COUNT_X.finditer(clause[:x.start])]
            count = said[-1] if said else 1
        total += x.amount * count
    return total


def purchase_price(ctx: Context) -> tuple[float, str] | None:
    """What buying costs as the user quotes it ('自己买一台8卡4090服务器大概20万', 'a used 4090 is ~$1800',
    'buying a server at $32k'), with its currency: the price to weigh renting against, not a budget."""
    from advisor.numbers import find_amounts, find_money  # the amount right after the cue

    for m in _PURCHASE.finditer(ctx.masked):
        rest = ctx.masked[m.end():m.end() + 36]  # '买一台 8 卡 4090 服务器大概 25 万': the card said first
        money = [x for x in find_money(rest) if x.start <= 30]
        if money and money[0].amount >= 50:
            clause = re.split(r"[.?!。？！;；\n]", ctx.masked[m.end():m.end() + 160])[0]
            total = _composed_price(clause)
            return (total or money[0].amount), money[0].currency or _currency_of(rest)
        amounts = [a for a in find_amounts(rest) if a.start <= 30 and a.value >= 1000 and re.search("[万千kK]", a.text)]
        if amounts:
            return amounts[0].value, _currency_of(rest)
    return None


_QUOTE = re.compile(r"(?:整机)?(?:报价|总价|售价|报了|开价|要价|卖|含税|不含税|税后|合计|总计|"
                    r"quoted?|quotation|offer(?:ed)?|priced|asking|price\s*[:：]|price (?:is|was|of)|for|"
                    r"total(?: price)?|comes to|costs?)[^，,。;；!?？\n]{0,16}?"
                    r"(?=\s*(?:约|大概|~|about|around|at|of|for|:|：|是|为)?\s*[$¥￥€£]?\s*\d)", _I)


_SELLER = re.compile(r"报价|总价|售价|开价|要价|quot|offer|reseller|vendor|supplier|供应商|经销商|渠道", _I)


_CIRCUIT_LOAD = re.compile(
    r"(\d{2,5})\s*w(?:atts?)?\s+(?:is\s+|are\s+)?(?:already\s+)?(?:on|of|from|using|used on)\s+"
    r"(?:that|the|this|our|same)\s+(?:same\s+)?(?:circuit|outlet|line|breaker)|"
    r"(?:circuit|outlet|line)\s+(?:already\s+)?(?:has|carries|runs|feeds)\s+(?:about\s+|~)?(\d{2,5})\s*w\b|"
    r"(?:同一|这个|那个)?\s*(?:插座|回路|线路|电路)\S{0,8}(?:已经|还有|另外|本来就)[^\d，。,]{0,6}?(\d{2,5})\s*(?:w|瓦)",
    re.I)


def circuit_load_w(ctx: Context) -> float | None:
    """'600W already on that circuit', '这个插座上已经有 600W 的设备' → other load on the machine's circuit, W."""
    m = _CIRCUIT_LOAD.search(ctx.masked)
    if m is None:
        return None
    value = float(m.group(1) or m.group(2) or m.group(3))
    return value if 10 <= value <= 20_000 else None


_UPS_VA = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(k)?\s*va\b", re.I)


def ups_va(ctx: Context) -> float | None:
    """'a 1500VA UPS', '3kVA 的 UPS' → the UPS's rating, VA."""
    m = _UPS_VA.search(ctx.masked)
    if m is None:
        return None
    value = float(m.group(1)) * (1000 if m.group(2) else 1)
    return value if 100 <= value <= 1_000_000 else None


_UPS_MINUTES = re.compile(r"(?:后备|续航|备电|支撑|撑|runtime|backup|hold[- ]?up|ride[- ]through)\D{0,12}?"
                          r"(\d{1,3})\s*(?:分钟|min(?:ute)?s?)(?![a-z])|"
                          r"(\d{1,3})\s*(?:分钟|min(?:ute)?s?)(?![a-z])\s*(?:的)?\s*"
                          r"(?:后备|续航|备电|of runtime|of backup|runtime|backup)", _I)


def ups_minutes(ctx: Context) -> float | None:
    """'后备15分钟', '15 minutes of runtime': the battery time a UPS must give, minutes."""
    m = _UPS_MINUTES.search(ctx.masked)
    value = float(m.group(1) or m.group(2)) if m else None
    return value if value and 0 < value <= 600 else None


def quoted_price(ctx: Context) -> tuple[float, str] | None:
    """A price a seller quoted for the build ('整机报价 ¥268,000', 'the reseller quoted $96,500'): to be judged
    against the catalog, not a budget."""
    from advisor.numbers import find_amounts, find_money

    if not _SELLER.search(ctx.masked):
        return None
    for m in _QUOTE.finditer(ctx.masked):
        rest = ctx.masked[m.end():m.end() + 20]
        money = [x for x in find_money(rest) if x.start <= 12 and not _glued(ctx.masked, m.end() + x.start)]
        said = ctx.masked[max(0, m.end() - 6):m.end()] + rest  # 'Unit price: USD 289,500': the code before it
        if money and money[0].amount >= 500:
            return money[0].amount, money[0].currency or _currency_of(said)
        amounts = [a for a in find_amounts(rest) if a.start <= 12 and a.value >= 1000
                   and not _glued(ctx.masked, m.end() + a.start)]
        if amounts:
            return amounts[0].value, _currency_of(said)
    if vocab.matches("ask", "price_check", ctx.text):  # a pasted quote, asked about: its one price, where it stands
        money = [x for x in find_money(ctx.masked) if x.amount >= 500 and not _glued(ctx.masked, x.start)
                 and not _BUDGET_BEFORE.search(ctx.masked[max(0, x.start - 16):x.start])]
        if len(money) == 1:
            return money[0].amount, money[0].currency or _currency_of(ctx.masked)
    return None


_BUDGET_BEFORE = re.compile(r"budget|预算|经费|资金|afford|up to|under|以内", re.I)


def _glued(text: str, start: int) -> bool:
    """A number written onto letters ('NF5688M7', 'XE9680'): part of a product's name, never an amount."""
    return start > 0 and text[start - 1].isascii() and text[start - 1].isalpha()


def _currency_of(text: str) -> str:
    return "USD" if re.search(r"[$]|usd|dollar|美元|美金|刀", text, _I) else "EUR" if "€" in text else "CNY"


_KWH = re.compile(rf"(?:电费|电价|electricity|power)\D{{0,12}}?({N})\s*(?:块|元|毛|eur|€|usd|\$|dollars?|cents?)?"
                  rf"\s*(?:钱)?\s*(?:一度|每度|/\s*度|per\s*kwh|/\s*kwh|a\s*kwh|kwh)", _I)


_KWH_UNIT = re.compile(rf"(?:[$¥￥€£]\s*)?({N})\s*(?:块|元|毛|eur|€|usd|dollars?|cents?)?\s*(?:钱)?\s*"
                       rf"(?:/\s*kwh|per\s*kwh|a\s*kwh|/\s*度|一度|每度)", _I)
_KWH_BARE = re.compile(rf"(?:电价|电费单价|electricity (?:price|rate|tariff)|tariff)\s*(?:是|为|按|:|：|of|is|at)?\s*"
                       rf"[$¥￥€£]?\s*({N})(?!\s*(?:万|千|k|%|年|天|小时))", _I)


_KWH_BEFORE = re.compile(rf"(?:一度电|每度电|一度|每度|per\s*kwh|a\s*kwh)\s*(?:是|要|按|收|:|：|=|is|costs?|at|of)?\s*"
                         rf"[$¥￥€£]?\s*({N})\s*(?:块|元|毛|eur|€|usd|dollars?|cents?)?", _I)


# a price spoken in 块 and 毛: '1块2' is 1.2 yuan, '6毛' 0.6
_SPOKEN_YUAN = r"(?<![\d.])(?:(\d{1,2})\s*块\s*(\d)|(\d)\s*毛)(?![\d.])"
_KWH_SPOKEN = (re.compile(rf"{_SPOKEN_YUAN}\s*(?:毛)?\s*(?:钱)?\s*(?:一度|每度|/\s*度)"),
               re.compile(rf"(?:一度电|每度电|一度|每度|电价|电费)\D{{0,4}}?{_SPOKEN_YUAN}"))


_KWH_WORD = re.compile(r"kwh|度|电费|电价|electricity|tariff", _I)
_KWH_CENTS = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*(?:p|pence|c|ct|cents?|¢)\s*(?:/|per|a|an)\s*kwh", _I)
_KWH_CURRENCY = (("CNY", re.compile(r"[¥￥元块毛]|\bcny\b|\brmb\b|\byuan\b", _I)),
                 ("GBP", re.compile(r"£|\bgbp\b|\bpence\b|\d\s*p\s*(?:/|per|a|an)\s*kwh", _I)),
                 ("EUR", re.compile(r"€|\beur\b|\beuros?\b", _I)),
                 ("USD", re.compile(r"\$|\busd\b|\bcents?\b|\bdollars?\b", _I)))


def kwh_currency(ctx: Context) -> str | None:
    """The currency the electricity price is written in ('CNY 0.8/kWh', '£0.25/kWh', '电价 0.6 元'), when marked."""
    for m in _KWH_WORD.finditer(ctx.text):
        window = ctx.text[max(0, m.start() - 16):m.end() + 16]
        if not re.search(r"\d", window):
            continue
        found = next((code for code, pattern in _KWH_CURRENCY if pattern.search(window)), None)
        if found:
            return found
    return None


def kwh_price(ctx: Context) -> float | None:
    """The electricity price per kWh ('电费按 1 块钱一度', 'electricity is 0.35 EUR per kWh', '$0.08/kWh',
    '电价0.6')."""
    spoken = next((m for pattern in _KWH_SPOKEN if (m := pattern.search(ctx.text))), None)
    if spoken:  # '1块2一度', '电价6毛'
        whole, tenth, jiao = spoken.groups()
        return int(whole) + int(tenth) / 10 if whole else int(jiao) / 10
    if (cents := _KWH_CENTS.search(ctx.text)) and 0 < float(cents.group(1)) < 500:
        return float(cents.group(1)) / 100  # '27p per kWh', '12 cents/kWh': hundredths of the currency
    for pattern in (_KWH, _KWH_UNIT, _KWH_BEFORE, _KWH_BARE):
        m = pattern.search(ctx.text)
        value = parse_number(m.group(1)) if m else None
        if value and 0 < value < 10:
            return value
    return None


_PER_HOUR = re.compile(
    rf"(?:(\$|¥|￥|€)\s*({N})\s*(?:/\s*(?:gpu[-\s·/]*)?(?:hr|h|hour)\b|(?:an|per|a)\s+(?:gpu[-\s·]*)?hour|"
    rf"/\s*gpu\s*/\s*(?:hr|h|hour)\b)|"
    rf"({N})\s*(美元|美金|刀|块钱?|元|dollars?|bucks)\s*(?:一|每|一个|/)\s*(?:小时|h\b)|"
    rf"(?:一|每|一个)\s*(?:卡\s*)?(?:小时|时)\s*(?:大概|大约|约|要|是)?\s*({N})\s*(美元|美金|刀|块钱?|元)|"
    rf"({N})\s*(美元|美金|刀|块钱?|元)\s*(?:/|每|一)\s*(?:个)?\s*卡\s*(?:小)?时)", _I)


def rental_rate(ctx: Context) -> tuple[float, str] | None:
    """A rental price per GPU-hour the user quotes ('$2/hr per H100', '一小时 2 美元', '两块钱一小时')."""
    m = _PER_HOUR.search(ctx.masked)
    if not m:
        return None
    value = parse_number(m.group(2) or m.group(3) or m.group(5) or m.group(7))
    mark = (m.group(1) or m.group(4) or m.group(6) or m.group(8) or "").lower()
    currency = "USD" if mark in ("$", "美元", "美金", "刀", "dollar", "dollars", "bucks") else (
        "EUR" if mark == "€" else "CNY")
    return (value, currency) if value and 0 < value < 1000 else None


_RAM_AFTER = re.compile(rf"({N})\s*(?:gb|g|gib|t|tb)(?![a-z0-9])\s*(?:of\s+)?(?:system\s+|ddr[45]\s+|ecc\s+)*"
                        r"(?:ram|memory(?!\s*(?:bandwidth|bus))|内存|系统内存|ddr[45])(?!\s*带宽)", _I)
_RAM_BEFORE = re.compile(rf"(?:系统内存|内存条?|\bram\b|system memory)\s*(?:是|有|才|只有|就|共|总共|:|：|of|is|=)?\s*"
                         rf"({N})\s*(?:gb|g|gib|t|tb)?(?![a-z0-9])", _I)


def system_ram_gb(ctx: Context) -> float | None:
    """'64 GB RAM', '128G 内存', '内存只有 32G', '1TB DDR5' → the host's system RAM in GB. A size equal to a named
    card's memory is read as that card's VRAM ('A100 80G内存' is a layman's word for VRAM)."""
    vram = {round(ctx.catalog.gpu(gid).memory_gb) for _, _, gid in ctx.gpu_spans}
    for pattern in (_RAM_AFTER, _RAM_BEFORE):
        for m in pattern.finditer(ctx.masked):
            value = parse_number(m.group(1))
            if value is None:
                continue
            if re.search(r"\d\s*(t|tb)\b", m.group(0), _I):
                value *= 1024
            if 4 <= value <= 16_384 and round(value) not in vram:
                return value * times_written(ctx.masked, m.start(), m.end())  # '64G DDR5 ×16' is 1 TB
    return None


_CARD_MEMORY = re.compile(rf"({N})\s*(?:gb|g|gib)(?![a-z0-9])\s*(?:的)?\s*(?:显存的?|vram)?\s*(?:卡|显卡|加速卡|gpus?|"
                          rf"graphics cards?|cards?)(?![a-z])|"
                          rf"(?:单卡|一张卡|显卡显存|显存只有|vram of)\s*({N})\s*(?:gb|g)(?![a-z0-9])|"
                          rf"(?<![\d.])\d{{3,4}}\s*(?:ti|super|xtx|xt)?\s*({N})\s*(?:gb|g)(?![a-z0-9])|"
                          rf"({N})\s*(?:gb|g)(?![a-z0-9])\s*(?:的)?\s*"
                          rf"(?:version|variant|model|one|config\w*|sku|版本|版|款)", _I)


def card_memory_gb(ctx: Context) -> float | None:
    """'a 32 GB GPU', '16G 的卡', '24gb card', '单卡 48G' → the memory of a card named only by its size."""
    if ctx.gpu_spans:
        return None
    m = _CARD_MEMORY.search(ctx.masked)
    # '3060 12g': a card outside the catalog, known by its memory; 'the 256GB version': the same card with that much
    value = parse_number(m.group(1) or m.group(2) or m.group(3) or m.group(4)) if m else None
    return value if value and 2 <= value <= 1024 else None


_VARIANT_WORD = re.compile(r"version|variant|model|config\w*|sku|one\b|版本|版|款|配置", _I)
_SIZE_IN_SENTENCE = re.compile(rf"({N})\s*(?:gb|g|tb|t)(?![a-z0-9])", _I)


def memory_variants(ctx: Context) -> list[float] | None:
    """'256GB or 512GB version?', '96G 还是 256G 的版本': the memory sizes of one product weighed in a sentence that
    says version, variant or model (GB; TB × 1024)."""
    # a question that goes on with 'or …' ('the 256gb one? or do i need the 512gb') is one sentence
    for sentence in re.split(r"[。.!?！？\n](?!\s*(?:or\b|还是|或者))", ctx.masked):
        if not _VARIANT_WORD.search(sentence):
            continue
        sizes = [(parse_number(m.group(1)) or 0) * (1024 if m.group(0).lower().rstrip().endswith(("t", "tb")) else 1)
                 for m in _SIZE_IN_SENTENCE.finditer(sentence)]
        sizes = [s for s in dict.fromkeys(sizes) if 8 <= s <= 4096]
        if len(sizes) >= 2 or (sizes and re.search(r"\bor\b|还是|或者|\bvs\.?", sentence, _I)):
            return sizes  # 'A100 40GB or 80GB version': the named card's own size is in its (blanked) name
    return None


def scientific_code(ctx: Context) -> str | None:
    """'GROMACS', 'AlphaFold 3', '冷冻电镜' → the code's id, whose GPU build fixes whether FP64 is needed; of several
    codes named, the double-precision one (the machine must run it)."""
    code = strictest_code(ctx.text)
    return code.id if code else None


def build_topic(ctx: Context) -> str | None:
    """What a build question asks about first ('主板要几个 x16 槽' → slots, 'will it trip the breaker' → wall)."""
    found = [(m.start(), name) for name in vocab.names("build_topic")
             if (m := vocab.matches("build_topic", name, ctx.masked))]
    return min(found)[1] if found else None


_DDR = re.compile(r"\bddr\s*([45])\b|(?<![a-z0-9])lpddr5x?\b", _I)
_CHANNELS = re.compile(r"\b(dual|two|2|quad|four|4|six|6|eight|8|twelve|12)[- ]channel\b"
                       r"|([双二两四六八]|十二)\s*通道", _I)
_CHANNEL_WORDS = {"dual": 2, "two": 2, "quad": 4, "four": 4, "six": 6, "eight": 8, "twelve": 12, "双": 2, "二": 2,
                  "两": 2, "四": 4, "六": 6, "八": 8, "十二": 12}
# GB/s per channel at common speeds: DDR4-3200 (25.6), DDR5-5600 (44.8)
_PER_CHANNEL_GBS = {"4": 25.6, "5": 44.8}


def host_bandwidth_gbs(ctx: Context) -> float | None:
    """System RAM bandwidth from its type and channels ('64GB DDR4' → dual-channel DDR4-3200, 51.2 GB/s;
    '八通道 DDR5' → 358.4 GB/s); None when neither is said."""
    ddr, channels = _DDR.search(ctx.text), _CHANNELS.search(ctx.text)
    if not ddr and not channels:
        return None
    generation = (ddr.group(1) or "5") if ddr else "5"
    n = 2
    if channels:
        word = (channels.group(1) or channels.group(2)).lower()
        n = _CHANNEL_WORDS.get(word) or int(word)
    return round(_PER_CHANNEL_GBS[generation] * n, 1)


_ENGINE_WORDS = (("llamacpp", r"ollama|llama\.?cpp|\bgguf\b|lm ?studio|koboldcpp"),
                 ("sglang", r"\bsglang\b"), ("vllm", r"\bvllm\b"))


def engine_hint(ctx: Context) -> str | None:
    """The engine the user runs: 'ollama', 'llama.cpp', 'GGUF', 'LM Studio' (llama.cpp-style quantised files),
    'SGLang' or 'vLLM'; the first one named when several are."""
    found = [(m.start(), name) for name, pattern in _ENGINE_WORDS if (m := re.search(pattern, ctx.text, _I))]
    return min(found)[1] if found else None


_ADD_CARDS = re.compile(
    rf"(?:(?:再|多|又)\s*(?:加|添|买|上|插|来|收|入|搞|弄|淘|配)|(?<!参)(?:加|添)(?:上|装)?)\s*({N}|一)\s*(?:张|块|片)|"
    rf"\b(?:add(?:ing)?|buy(?:ing)?|get(?:ting)?|put(?:ting)? in)\s+(a|an|one|another|a second|two|three|four|\d+)\s+"
    rf"(?:more\s+)?(?:(?:card|gpu)s?|of (?:them|those)(?!\s+(?:servers?|machines?|nodes?|boxes|systems?))|one)\b|"
    rf"\b(a|one|two|\d+) more (?:card|gpu)s?\b|\badd(?:ing)? (?:a )?(second|third|another) one\b", _I)
_ADD_WORDS = {"a": 1, "an": 1, "one": 1, "another": 1, "a second": 1, "second": 1, "third": 1, "a third": 1,
              "one more": 1, "一": 1, "第二张": 1, "再一张": 1}


_ADD_BEFORE_CARD = re.compile(r"(?:\badd(?:ing|ed)?|再加|再买|再上|再插|再收|再入|再搞|再弄|再淘|再配)\s*"
                              r"(a second|another|a third|one more|an?|one|two|three|four|\d+|一)\s*(?:more\s*)?"
                              r"(?:张|块|片)?"
                              r"(?:\s*(?:used|new|second[- ]hand|refurbished|cheap|modded|二手|全新|魔改)(?:的)?)?\s*$|"
                              r"(?:\bget(?:ting)?|\bbuy(?:ing)?|\bthrow(?:ing)? in|\bput(?:ting)? in)\s*"
                              r"(a second|another|a third|one more)"
                              r"(?:\s*(?:used|new|second[- ]hand|refurbished|cheap|modded))?\s*$|"
                              r"(?:^|[\s,，(])(a second|another|one more|第二张|再一张)\s*"
                              # 'is a second used 3090 enough?'
                              r"(?:used|new|second[- ]hand|refurbished|cheap|二手|全新)?(?:的)?\s*$", _I)
_AS_SECOND = re.compile(r"^\s*(?:as (?:the|a|my) (second|third|extra|additional) (?:card|gpu)|(?:作为|当)第[二三]张)",
                        _I)


_POSITIONS = {"second": 2, "third": 3, "第二张": 2, "第三张": 3}


def card_position(ctx: Context) -> int | None:
    """'a 5090 as the second card', 'add a third 3090': the place the named card takes among the cards (2 for the
    second)."""
    for start, end, _ in ctx.gpu_spans:
        m = _AS_SECOND.match(ctx.text[end:end + 32])
        if m:
            word = (m.group(1) or "").lower() or ("第三张" if "第三张" in m.group(0) else "第二张")
            return _POSITIONS.get(word)
        before = _ORDINAL_BEFORE.search(ctx.text[max(0, start - 24):start])
        if before:
            return _ORDINAL_PLACE.get(before.group(1).lower())
    return None


# now and later said apart ('one 3090 for now and add the second later', '先买一张，以后再加'): the card added is not
# in the setup asked about ('what if I add a third later, could I run bigger?' asks about the setup with it)
_LATER = re.compile(r"\b(?:for now|to start with|for the time being)\b|"
                    r"(?:先买|先上|先用|暂时).{0,12}(?:以后|之后|后面|将来|明年)\s*(?:再)?\s*(?:加|添|上)", _I)
_ORDINAL_PLACE = {"second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "第二张": 2, "第三张": 3,
                  "第四张": 4}
_ORDINAL_BEFORE = re.compile(r"(?:(?:add(?:ing|ed)?|get(?:ting)?|buy(?:ing)?|throw(?:ing)? in|put(?:ting)? in)\s+"
                             r"(?:a|the)\s+|(?:加|买|上|插)\s*)(second|2nd|third|3rd|fourth|4th|第二张|第三张|第四张)"
                             r"\s*(?:used|new|second[- ]hand|refurbished|cheap|二手|全新)?(?:的)?\s*$", re.IGNORECASE)


_ORDINAL = r"(?:2nd|second|3rd|third|4th|fourth|5th|fifth|6th|sixth|7th|seventh|8th|eighth)"
_ADD_ORDINALS = re.compile(rf"\badd(?:ing)?\s+(?:a\s+|the\s+)?{_ORDINAL}(\s*(?:and|&|,)\s*(?:a\s+|the\s+)?{_ORDINAL})?"
                           rf"|第[二三四五六七八]\s*(?:张|块)?\s*(和|、)\s*第[三四五六七八九]\s*(?:张|块)", _I)


# cards added that the message describes but does not name: '3张4090加1张大显存的卡', '3 4090s plus one
# high-memory card'
_ADDED_UNLIKE = re.compile(rf"(?:加|添|再配|配|plus|and|\+)\s*(?:{N}|一|one|an?)\s*(?:张|块)?\s*"
                           r"(?:大显存|大内存|显存更?大|别的|其他|另一种|另外一种|high[- ]memory|big[- ]memory|"
                           r"larger|bigger|other|different)\w{0,3}\s*(?:的)?\s*(?:卡|显卡|card|gpu)", _I)


def added_unlike(ctx: Context) -> bool:
    """Whether the cards added are another kind than the one named, described instead of named ('加1张大显存的
    卡'): the plan takes the card the conversation last weighed for that, not more of the named one."""
    m = _ADDED_UNLIKE.search(ctx.masked)
    return m is not None and any(end <= m.start() for _, end, _ in ctx.gpu_spans)


def added_cards(ctx: Context) -> int | None:
    """'再加一张', 'add a second one', 'adding a second 4090', 'a 5090 as the second card', 'two more GPUs': cards
    added to the configuration under discussion — now, not one added later ('one 3090 for now and add the second
    later' is one card)."""
    if _LATER.search(ctx.text):
        return None
    for start, end, _ in ctx.gpu_spans:
        before = _ADD_BEFORE_CARD.search(ctx.text[max(0, start - 24):start])
        if before or _AS_SECOND.match(ctx.text[end:end + 32]):
            raw = (next((g for g in before.groups() if g), "one") if before else "one").lower()
            said = _ADD_WORDS.get(raw) or parse_number(raw) or 1
            return int(said) if 1 <= said <= 64 else None
    ordinals = _ADD_ORDINALS.search(ctx.text)
    if ordinals:  # 'add a 3rd and 4th 3090': one card per ordinal
        return 1 + bool(ordinals.group(1) or ordinals.group(2))
    m = _ADD_CARDS.search(ctx.masked)
    if m is None:
        return None
    raw = next(g for g in m.groups() if g).lower()
    value = _ADD_WORDS.get(raw) or parse_number(raw)
    return int(value) if value and 1 <= value <= 64 else None


_BUDGET_UP = re.compile(r"(?:预算|经费|钱)?\s*(?:再|多)\s*(?:加|添|追加|增加|给)(?![到至])\s*"
                        r"(?=[^，,。；;]{0,12}(?:万|千|元|块|\$|¥))|"
                        r"(?:预算|经费)\s*(?:增加|提高|追加|涨|加)(?![到至])\s*(?:了)?\s*|"
                        r"\b(?:budget\s+(?:goes\s+)?up\s+by|(?:increase|raise)\s+(?:the\s+)?budget\s+by|"
                        r"add\s+(?=\S*\s*(?:\$|usd|dollars|k\b))|another)\s*", _I)


def budget_added(ctx: Context) -> float | None:
    """'预算再加 5 万', 'budget up by $2k', 'another $5,000': money added to the budget under discussion (its amount,
    in the currency the budget is in)."""
    from advisor.numbers import find_amounts  # the amount right after the cue

    for m in _BUDGET_UP.finditer(ctx.masked):
        rest = ctx.masked[m.end():m.end() + 16]
        amounts = [a for a in find_amounts(rest) if a.start <= 2]
        if amounts and amounts[0].value >= 10:
            return amounts[0].value
    return None


# what a what-if scales ('traffic grows 5x', '预算翻倍', 'double the nodes', 'users halve'): the slot and the factor
_SCALED_THINGS = {
    "users": r"traffic|volume|users?|requests?|load|concurren\w*|people|staff|流量|业务量|调用量|对话量|请求量|"
             r"用户|请求|并发|人数|访问量|人",
    "budget": r"budget|money|预算|经费",
    "data": r"data(?:set)?|tokens?|corpus|数据(?:量)?|语料",
    "nodes": r"nodes?|servers?|machines?|boxes|节点|机器|服务器|台",
    "cards": r"gpus?|cards?|卡",
}
_FACTOR = (r"(?P<n>\d+(?:\.\d+)?)\s*(?:x|×|倍)(?![a-z0-9])(?!\s{2,})(?!\s*\d)|"  # not '8x H100' (a name,
           # blanked), nor '2x 30A circuits' (a count of the quantity after it)
           r"(?P<two>double[sd]?|doubling|twice|翻倍|翻一倍|翻番|加倍|多一倍)|"
           r"(?P<three>triple[sd]?|tripling|翻两倍)|(?P<half>halve[sd]?|halving|half|"
           r"(?:砍|减|少|降|缩|削|剩|压|省)(?:掉|到|了|成|去|下|个)?一?半|对半|打对折|一半)|"
           r"(?:(?P<less>砍|减|少|降|缩|削|压|省|cut|down|less|lower|smaller)(?:掉|了|去|\s+by)?\s*(?P<pd>\d{1,2})\s*%)|"
           r"(?:(?P<more>加|多|涨|增|升|提|up|more|bigger|higher|raise[sd]?)(?:了|\s+by)?\s*(?P<pu>\d{1,3})\s*%)")
_THINGS = "|".join(_SCALED_THINGS.values())
_SCALED = (re.compile(rf"(?P<thing>{_THINGS})\W{{0,3}}(?:\w+\W+|[再只就也还又都要能][\u4e00-\u9fff]?){{0,3}}?"
                      rf"(?:{_FACTOR})", _I),
           re.compile(rf"(?:{_FACTOR})\W{{0,3}}(?:\w+\W+){{0,2}}?(?:the\s+|our\s+|的)?(?P<thing>{_THINGS})", _I))


def scaled(ctx: Context) -> tuple[str, float] | None:
    """'traffic grows 5x', '预算翻倍', 'double the nodes': which slot a what-if scales and by how much."""
    m = next((found for pattern in _SCALED if (found := pattern.search(ctx.masked))), None)
    if m is None:
        return None
    thing = m.group("thing").lower()
    slot = next((k for k, pat in _SCALED_THINGS.items() if re.fullmatch(pat, thing, _I)), None)
    factor = (float(m.group("n")) if m.group("n") else 2.0 if m.group("two") else 3.0 if m.group("three")
              else 0.5 if m.group("half") else 1 - int(m.group("pd")) / 100 if m.group("pd")
              else 1 + int(m.group("pu")) / 100 if m.group("pu") else None)
    if slot is None or factor is None or not 0.1 <= factor <= 100 or factor == 1:
        return None
    return slot, factor


_LOAD = re.compile(rf"({N})\s*%\s*(?:average\s+|avg\s+|的)?(?:load|负载|负荷|功耗|power)|"
                   rf"(?:load|负载|负荷)\s*(?:of|at|about|around|约|大概|在)?\s*({N})\s*%", _I)


def load_share(ctx: Context) -> float | None:
    """'at roughly 60% load', '负载 60%': the share of full power drawn on average while it runs."""
    m = _LOAD.search(ctx.masked)
    value = parse_number(m.group(1) or m.group(2)) if m else None
    return round(value / 100, 4) if value and 0 < value < 100 else None


def days_used_share(ctx: Context) -> float | None:
    """The share of days the GPUs run, when not every day: weekdays 5/7, '3 days a week' 3/7, '3 days a month'
    3 of 30.4; None when every day or not said."""
    m = _DAYS_USED.search(ctx.masked)
    if not m:
        return None
    if m.group(1):
        return 5 / DAYS_PER_WEEK
    week, month = m.group(2) or m.group(3), m.group(4) or m.group(5)
    days = parse_number(week or month or "")
    period = DAYS_PER_WEEK if week else DAYS_PER_MONTH
    return round(days / period, 4) if days and 0 < days < period else None


_LINK = re.compile(r"(?<![\d.])(\d{1,4})\s*(?:g|gb|gbe|gb/s|gbps|gbit|gbit/s|千兆|g\s*bit)(?![a-z0-9])\s*(?:的)?\s*"
                   r"(?:以太网|ethernet|网卡|网络|网口|roce\w*|ib\b|infiniband|nics?|links?|networking|ports?)|"
                   r"(?:以太网|ethernet|roce\w*|infiniband|\bib\b)\s*(?:是|只有|only)?\s*(\d{1,4})\s*(?:g|gb|gbe|gbps)"
                   r"(?![a-z0-9])", _I)


# in a message about the network, a line rate said alone ('中间用什么网络？25G够不够'); only the rates links come in,
# so a card's '24G' or '48G' of memory is never one
_NETWORK_TALK = re.compile(r"网络|组网|互联|交换机|网卡|network|networking|interconnect|switch|\bnics?\b|\bib\b|"
                           r"infiniband|roce", _I)
_BARE_RATE = re.compile(r"(?<![\d.])(1|10|25|40|50|100|200|400|800)\s*(?:g|gbe|gbps|gb/s|gbit)(?![a-z0-9])"
                        r"(?!\s*(?:的)?\s*(?:显存|内存|存储|硬盘|memory|vram|ram|ssd|disk))", _I)


def node_link_gbps(ctx: Context) -> float | None:
    """The network the user's nodes have, per node ('节点之间只有25G以太网', '2x 200G RoCE', '100GbE', '组网用
    什么？25G够不够')."""
    m = _LINK.search(ctx.masked)
    if m is None and _NETWORK_TALK.search(ctx.masked):
        m = _BARE_RATE.search(ctx.masked)
    if m is None:
        return None
    value = float(m.group(1) or m.group(2))
    return value * times_written(ctx.masked, m.start(), m.end()) if 1 <= value <= 1600 else None


_GPU_HOURS = re.compile(rf"({N}(?:\s?[kK](?![a-z]))?)\s*(?:gpu|card)[-\s]*(?:hours?|hrs?|h)\b|"
                        rf"({N})\s*(?:个)?\s*(?:卡时|gpu[-\s]*小时)", _I)
# the period a number of GPU-hours is spent over, and how many months it is
_PER_PERIOD = ((re.compile(r"\b(?:a|per|each|every|/|this|the)\s*(?:academic\s+|school\s+|fiscal\s+)?year\b|"
                           r"\byearly\b|\bannual(?:ly)?\b|每年|一年|一学年|全年|年度|今年", _I), 12.0),
               (re.compile(r"\b(?:a|per|each|every|/)\s*week\b|\bweekly\b|每周|一周", _I), 12 / 52),
               (re.compile(r"\b(?:a|per|each|every|/)\s*day\b|\bdaily\b|每天|一天", _I), 1 / 30.4))


def gpu_hours_month(ctx: Context) -> float | None:
    """GPU-hours used a month across the fleet ('300 GPU-hours/month', '每月 3000 卡时', '20k GPU hours this
    academic year' = 1,667 a month): renting costs them at the hourly rate whatever is bought."""
    m = _GPU_HOURS_A_MONTH.search(ctx.masked)
    value = parse_number(m.group(1) or m.group(2) or m.group(3)) if m else None
    if value is None and (h := _GPU_HOURS.search(ctx.masked)) is not None:
        raw = h.group(1) or h.group(2)
        base = parse_number(raw.rstrip("kK "))
        said = base * (1000 if raw.rstrip().endswith(("k", "K")) else 1) if base else None
        window = ctx.masked[max(0, h.start() - 12):h.end() + 80]
        months = next((n for pattern, n in _PER_PERIOD if pattern.search(window)), None)
        value = said / months if said and months else None
    return value if value and 0 < value <= MAX_GPU_HOURS_A_MONTH else None


_SITE_MW = re.compile(rf"({N})\s*(?:mw|megawatts?|兆瓦)(?![a-z])", _I)


def site_kw(ctx: Context) -> float | None:
    """A site's power in megawatts ('1MW of IT power', '2 兆瓦'), as kW: how many systems a site holds."""
    m = _SITE_MW.search(ctx.masked)
    value = parse_number(m.group(1)) if m else None
    return value * 1000 if value and 0 < value <= 10_000 else None


def gpu_hours_total(ctx: Context) -> float | None:
    """GPU-hours said as a total with no period ('~500 GPU hrs on A100', '2000 卡时'): what a rental job costs at
    the hourly rate."""
    h = _GPU_HOURS.search(ctx.masked)
    if h is None or gpu_hours_month(ctx) is not None:
        return None
    raw = h.group(1) or h.group(2)
    base = parse_number(raw.rstrip("kK "))
    value = base * (1000 if raw.rstrip().endswith(("k", "K")) else 1) if base else None
    return value if value and 0 < value <= MAX_GPU_HOURS_A_MONTH * 120 else None


MAX_GPU_HOURS_A_MONTH = 1024 * 24 * 31  # every GPU of the largest plan, all month


_TIMES = {"once": 1, "one time": 1, "twice": 2, "two times": 2, "thrice": 3, "一": 1, "两": 2, "二": 2, "三": 3,
          "四": 4, "五": 5, "几": 3}
_RUN_PERIODS = {"month": 1.0, "月": 1.0, "week": 52 / 12, "周": 52 / 12, "星期": 52 / 12, "quarter": 1 / 3,
                "季度": 1 / 3, "year": 1 / 12, "年": 1 / 12}
_TIMES_WORD = r"(once|one time|twice|two times|thrice|\d{1,2}\s*(?:x|times))"
_PERIOD_EN = r"(month|week|quarter|year)"
_PERIOD_ZH = r"(个?月|周|星期|个?季度|年)"
_RUNS = re.compile(rf"\b{_TIMES_WORD}\s+(?:a|per|each|every)\s+{_PERIOD_EN}\b|"
                   rf"\b(?:every|each)\s+{_PERIOD_EN}\b(?=.{{0,20}}\b(?:re-?train|train|fine-?tun|run|do)\w*)|"
                   rf"\b(?:re-?train\w*|fine-?tun\w*|train\w*)\s+(?:it\s+)?(?:every|each)\s+{_PERIOD_EN}\b|"
                   rf"(?:每|一)\s*{_PERIOD_ZH}\s*(?:训|跑|做|微调|更新|迭代|重训|训练)?\s*(?:个)?\s*"
                   rf"([一两二三四五几]|\d{{1,2}})\s*(?:次|回|轮)", _I)


def runs_per_month(ctx: Context) -> float | None:
    """How often a job is run, a month ('once a month', 'twice a week', 'retrain every quarter', '每季度训一次'):
    renting pays only for those runs, so buying is weighed against them, not against round-the-clock use."""
    m = _RUNS.search(ctx.masked)
    if m is None:
        return None
    times_raw, period_raw = m.group(1) or "1", next(g for g in (m.group(2), m.group(3), m.group(4), m.group(5)) if g)
    if m.group(6):
        times_raw = m.group(6)
    times_raw = times_raw.lower().strip()
    times = _TIMES.get(times_raw) or parse_number(re.sub(r"\s*(x|times)$", "", times_raw)) or 0
    period = next(v for k, v in _RUN_PERIODS.items() if k in period_raw.lower())
    value = round(times * period, 4)
    return value if 0 < value <= 31 else None


EXTRACTORS: dict[str, Extractor] = {
    "node_link_gbps": node_link_gbps,
    "gpu_hours_month": gpu_hours_month,
    "gpu_hours_total": gpu_hours_total,
    "runs_per_month": runs_per_month,
    "site_kw": site_kw,
    "days_used_share": days_used_share,
    "load_share": load_share,
    "added_cards": added_cards,
    "added_unlike": added_unlike,
    "card_position": card_position,
    "budget_added": budget_added,
    "scaled": scaled,
    "purchase_price": purchase_price,
    "quoted_price": quoted_price,
    "ups_va": ups_va,
    "ups_minutes": ups_minutes,
    "circuit_load_w": circuit_load_w,
    "asked_attribute": asked_attribute,
    "engine_hint": engine_hint,
    "host_bandwidth_gbs": host_bandwidth_gbs,
    "mains": mains,
    "circuits": circuits,
    "redundant_feeds": redundant_feeds,
    "memory_variants": memory_variants,
    "gpu_power_limit_w": gpu_power_limit,
    "hours_per_day": hours_per_day,
    "kwh_price": kwh_price,
    "kwh_currency": kwh_currency,
    "rental_rate": rental_rate,
    "psu_w": psu_watts,
    "system_ram_gb": system_ram_gb,
    "sci_code": scientific_code,
    "card_memory_gb": card_memory_gb,
    "build_topic": build_topic,
    "more_attributes": more_attributes,
    "cpu": cpu_platform,
    "cpu_name": cpu_name,
    "nodes": nodes,
    "sharding": sharding,
    "grad_checkpointing": grad_checkpointing,
    "has_host": has_host,
    "budget_scope": budget_scope,
    "region": region,
    "home": home,
    "organisation": organisation,
    "pue": pue,
    "racks": racks,
    "memory_bound": memory_bound,
    "supply": supply,
    "excluded_vendors": excluded_vendors,
    "only_vendors": only_vendors,
    "allowed_gpus": allowed_gpus,
}


def extract(ctx: Context) -> dict[str, Any]:
    """Every slot an extractor finds, by name."""
    found: dict[str, Any] = {}
    for slot, fn in EXTRACTORS.items():
        value = fn(ctx)
        if value is not None:
            found[slot] = value
    if "cpu" in found:
        found.pop("cpu_name", None)
    return found
