"""Scale-out plan: the network N GPU nodes need and what it adds to the bill.

``plan_scale_out(ScaleOutInput) -> ScaleOutPlan``. Rules (knowledge/data/fabric.toml, with sources):

- training across nodes (data parallel, ZeRO-3 / FSDP) exchanges gradients or parameters every step:
  one port per GPU, each GPU position on its own rail, as HGX/DGX nodes ship (8 × 400G);
- inference splits the layers across nodes (tensor parallel inside a node, pipeline between nodes):
  only the hidden state of each token crosses, ``hidden × 2`` bytes, so one port per node is enough;
  the plan states how many tokens/s that port carries;
- two nodes are cabled port to port (no switch); while the ports fit one switch, they share it; past that,
  a non-blocking two-tier leaf-spine: each leaf gives half its ports to nodes and half to spines;
- NICs are bought only for nodes that do not ship with them (8-GPU baseboard nodes and Ascend modules do).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.fabric import fabric_for
from tools.inputs import ToolInput
from tools.result import Note, note
from tools.units import USD

NODE_GPUS = 8  # GPUs in one node (8-GPU HGX/OAM baseboards, 8-slot servers); a plan past it spreads over nodes of 8


def nodes_for(count: int) -> int:
    """Machines ``count`` GPUs need: one up to a node's worth, else nodes of :data:`NODE_GPUS`."""
    return 1 if count <= NODE_GPUS else -(-count // NODE_GPUS)


def even_nodes(count: int) -> int:
    """Pipeline stages across machines for ``count`` GPUs: :func:`nodes_for` when the GPUs split evenly over them
    (tensor parallel inside each), else 1 (nine GPUs are no two equal nodes; they are sized as one group)."""
    nodes = nodes_for(count)
    return nodes if count % nodes == 0 else 1


MAX_NODES = 256  # 2,048 GPUs: past a two-tier leaf-spine of 64-port switches a third tier is needed, not designed here
HANDOFF_BYTES = 2  # a token's hidden state crosses a pipeline boundary in 16-bit


class ScaleOutInput(ToolInput):
    """``nodes`` machines of ``gpus_per_node`` × ``gpu`` working on one job."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="catalog GPU")
    nodes: int = Field(ge=2, le=MAX_NODES)
    gpus_per_node: int = Field(8, ge=1, le=8)
    workload: Literal["inference", "training", "scientific"]
    nic_included: bool = Field(False, description="the nodes ship with one port per GPU (HGX / OAM baseboards)")
    hidden_size: int | None = Field(None, ge=1, le=1_000_000, description="inference: the model's hidden size")
    trainable_params_b: float | None = Field(None, gt=0, le=20_000, description="training: parameters trained "
                                                                            "(billions), for the gradient exchange")
    sharded_across_nodes: bool = Field(False, description="training: ZeRO-3 / FSDP shards span the nodes (the "
                                                          "parameters are gathered every micro-batch)")
    have_gbps_per_node: float | None = Field(None, gt=0, le=12_800, description="the network the nodes have now, "
                                                                                "Gb/s per node")


class ScaleOutPlan(BaseModel):
    """The network between the nodes, its parts and cost (USD; None where a part's price is unknown)."""

    model_config = ConfigDict(extra="forbid")

    fabric_id: str
    fabric: str
    nodes: int
    gpus: int
    port_gbps: float = Field(description="one port's line rate, Gb/s")
    ports_per_node: int
    per_gpu_gbps: float = Field(description="network bandwidth per GPU, Gb/s")
    topology: Literal["direct", "one-switch", "leaf-spine"]
    nics_to_buy: int
    links: int = Field(description="ports cabled (each end counted once)")
    switches: int
    spines: int = Field(0, description="of the switches, those in the spine tier (leaf-spine only)")
    nic: str
    switch: str
    nic_usd: USD | None
    links_usd: USD | None
    switches_usd: USD | None
    cost_usd: USD = Field(description="the priced parts together")
    unpriced: list[str] = Field(description="parts whose price is unknown: 'nics', 'links', 'switches'")
    handoff_tokens_per_s: float | None = Field(None, description="inference: tokens/s one port carries between "
                                                                  "pipeline stages")
    sync_bytes_per_node: float | None = Field(None, description="training: bytes each node sends and receives per "
                                                                "gradient exchange (per optimizer step; per micro-"
                                                                "batch when sharded across nodes)")
    sync_s_planned: float | None = Field(None, description="seconds one exchange takes on the planned fabric")
    sync_s_have: float | None = Field(None, description="seconds one exchange takes on the network the nodes have")
    price_kind: str
    confidence: str
    sources: list[str]
    as_of: str
    formula: list[Note]
    assumptions: list[Note]


def plan_scale_out(inp: ScaleOutInput) -> ScaleOutPlan:
    """Ports, cabling, switches and cost for a job spread over ``inp.nodes`` nodes."""
    gpu = load_catalog().gpu(inp.gpu)
    fab = fabric_for(gpu.id)
    per_node = inp.gpus_per_node if inp.workload != "inference" else 1
    ports = inp.nodes * per_node
    direct = inp.nodes == 2
    links = ports  # cabling is priced per port: direct, each port to its rail twin; else each port to the switch
    topology = "direct" if direct else "one-switch" if ports <= fab.switch_ports else "leaf-spine"
    switches = 0 if direct else 1
    leaves = spines = 0
    if topology == "leaf-spine":  # non-blocking: a leaf's down-links equal its up-links
        down = fab.switch_ports // 2
        leaves = math.ceil(ports / down)
        spines = math.ceil(leaves * down / fab.switch_ports)
        switches = leaves + spines
        links = ports + leaves * down
    nics = 0 if inp.nic_included or fab.nic_usd == 0 else ports
    parts: dict[str, float | None] = {
        "nics": nics * fab.nic_usd if fab.nic_usd is not None else (0.0 if nics == 0 else None),
        "links": links * fab.link_usd if fab.link_usd is not None else None,
        "switches": switches * fab.switch_usd if fab.switch_usd is not None else (0.0 if switches == 0 else None),
    }
    handoff = None
    if inp.workload == "inference" and inp.hidden_size:
        handoff = fab.port_gbps * 1e9 / 8 / (inp.hidden_size * HANDOFF_BYTES)
    per_gpu = fab.port_gbps * per_node / inp.gpus_per_node
    sync = _sync_bytes(inp)
    planned_bytes_s = fab.port_gbps * per_node * 1e9 / 8
    formula = [
        note("scaleout.formula.ports", nodes=inp.nodes, per_node=per_node, ports=ports, gbps=fab.port_gbps,
             per_gpu=per_gpu),
        note(f"scaleout.formula.{'direct' if direct else 'switch' if topology == 'one-switch' else 'leaf_spine'}",
             ports=ports, switch_ports=fab.switch_ports, switches=switches, leaves=leaves, spines=spines,
             down=fab.switch_ports // 2),
    ]
    if handoff is not None:
        formula.append(note("scaleout.formula.handoff", gbps=fab.port_gbps, hidden=inp.hidden_size,
                            tokens_per_s=handoff))
    if sync is not None:
        formula.append(note("scaleout.formula.sync_sharded" if inp.sharded_across_nodes else "scaleout.formula.sync",
                            params_b=inp.trainable_params_b, nodes=inp.nodes, gb=sync / 1e9))
    assumptions = [note(f"scaleout.assume.{inp.workload if inp.workload == 'inference' else 'training'}"),
                   note("scaleout.assume.nics_included" if nics == 0 else "scaleout.assume.nics_bought",
                        nic=fab.nic)]
    return ScaleOutPlan(
        fabric_id=fab.id, fabric=fab.name, nodes=inp.nodes, gpus=inp.nodes * inp.gpus_per_node,
        port_gbps=fab.port_gbps, ports_per_node=per_node, per_gpu_gbps=per_gpu,
        topology=topology, nics_to_buy=nics, links=links, switches=switches, spines=spines,
        nic=fab.nic, switch=fab.switch if switches else "", nic_usd=parts["nics"], links_usd=parts["links"],
        switches_usd=parts["switches"], cost_usd=sum(v for v in parts.values() if v is not None),
        unpriced=[k for k, v in parts.items() if v is None], handoff_tokens_per_s=handoff,
        sync_bytes_per_node=sync, sync_s_planned=sync / planned_bytes_s if sync is not None else None,
        sync_s_have=sync / (inp.have_gbps_per_node * 1e9 / 8) if sync is not None and inp.have_gbps_per_node
        else None,
        price_kind=fab.price_kind, confidence=fab.confidence, sources=fab.sources, as_of=fab.as_of.isoformat(),
        formula=formula, assumptions=assumptions,
    )


GRAD_BYTES = 2  # gradients exchanged in BF16


def _sync_bytes(inp: ScaleOutInput) -> float | None:
    """Bytes through each node's links per gradient exchange: a ring all-reduce moves 2 × (N − 1) / N of the
    gradients; ZeRO-3 across nodes gathers the parameters twice and reduce-scatters the gradients, 3 × (N − 1) / N
    of them, every micro-batch."""
    if inp.workload != "training" or inp.trainable_params_b is None:
        return None
    share = (inp.nodes - 1) / inp.nodes
    passes = 3 if inp.sharded_across_nodes else 2
    return passes * share * inp.trainable_params_b * 1e9 * GRAD_BYTES
