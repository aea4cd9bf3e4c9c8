"""The HOT template layer: templates users write parse into the tree the engine needs; bad ones are refused
before anything is created, in heat's words, naming the place."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.domain.orchestration.errors import (
    CircularDependency,
    InvalidTemplateReference,
    InvalidTemplateVersion,
    StackValidationFailed,
    UnknownResourceType,
)
from tether.domain.orchestration.functions import references, resolve
from tether.domain.orchestration.parameters import CustomCheck, resolve_parameters
from tether.domain.orchestration.resource_group import member_definition, member_names
from tether.domain.orchestration.resource_types import (
    RESOURCE_TYPES,
    decline_unsupported,
    replacement_needed,
    unsupported_properties,
    validate_properties,
)
from tether.domain.orchestration.template import Template, parse_template


def hot(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def refused(source: Any, **kwargs: Any) -> StackValidationFailed:
    with pytest.raises(StackValidationFailed) as caught:
        parse_template(source, **kwargs)
    assert caught.value.status == 400
    assert caught.value.kind == "StackValidationFailed"
    return caught.value


SERVER_TWO_NETWORKS = hot("""
    heat_template_version: 2018-08-31
    description: a server on two networks
    parameters:
      flavor:
        type: string
        default: m1.small
        constraints:
          - custom_constraint: nova.flavor
      image:
        type: string
    resources:
      private:
        type: OS::Neutron::Net
        properties:
          name: private
      private_subnet:
        type: OS::Neutron::Subnet
        properties:
          network: {get_resource: private}
          cidr: 10.0.0.0/24
      server:
        type: OS::Nova::Server
        properties:
          name: web
          flavor: {get_param: flavor}
          image: {get_param: image}
          networks:
            - network: {get_resource: private}
              fixed_ip: 10.0.0.10
            - network: public
    outputs:
      address:
        description: where to reach it
        value: {get_attr: [server, first_address]}
      networks:
        value: {get_attr: [server, networks, public, 0]}
""")


def test_a_server_on_two_networks_parses_in_declaration_order_with_its_dependencies() -> None:
    template = parse_template(SERVER_TWO_NETWORKS)

    assert template.version == "2018-08-31"
    assert template.description == "a server on two networks"
    assert list(template.resources) == ["private", "private_subnet", "server"]
    assert list(template.parameters) == ["flavor", "image"]
    server = template.resources["server"]
    assert server.type == "OS::Nova::Server"
    assert server.properties["networks"][0] == {"network": {"get_resource": "private"}, "fixed_ip": "10.0.0.10"}
    assert template.dependencies() == {"private": frozenset(), "private_subnet": {"private"}, "server": {"private"}}
    assert template.creation_order() == [["private"], ["private_subnet", "server"]]
    assert template.outputs["address"].description == "where to reach it"
    # the literal network name is left for the service to look up, with its place
    assert CustomCheck("neutron.network", "public", ("resources", "server", "properties", "networks", 1, "network"),
                       30) in template.custom_checks


def test_the_template_comes_back_as_it_was_given_even_when_dates_look_like_dates() -> None:
    template = parse_template(SERVER_TWO_NETWORKS)
    as_dict = template.as_dict()

    assert as_dict["heat_template_version"] == "2018-08-31"
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert as_dict["resources"]["server"]["properties"]["networks"][1] == {"network": "public"}


def test_a_template_already_parsed_by_the_client_has_paths_but_no_lines() -> None:
    data = parse_template(SERVER_TWO_NETWORKS).as_dict()
    data["resources"]["server"]["properties"]["flavour"] = "m1.small"

    error = refused(data)

    assert str(error) == "Property error: resources.server.properties: Unknown Property flavour"
    assert error.line is None


PORTS_WITH_FIXED_IPS = hot("""
    heat_template_version: wallaby
    resources:
      port_a:
        type: OS::Neutron::Port
        properties:
          network: provisioning
          fixed_ips:
            - subnet: provisioning-subnet
              ip_address: 192.168.24.10
      port_b:
        type: OS::Neutron::Port
        properties:
          network: provisioning
          mac_address: "52:54:00:12:34:56"
      node:
        type: OS::Nova::Server
        properties:
          flavor: baremetal
          image: overcloud-full
          networks:
            - port: {get_resource: port_a}
            - port: {get_resource: port_b}
""")


def test_ports_with_fixed_ips_come_before_the_server_that_uses_them() -> None:
    template = parse_template(PORTS_WITH_FIXED_IPS)

    assert template.version == "wallaby"
    assert template.creation_order() == [["port_a", "port_b"], ["node"]]
    constraints = {(check.constraint, check.value) for check in template.custom_checks}
    assert constraints == {("neutron.network", "provisioning"), ("neutron.subnet", "provisioning-subnet"),
                           ("nova.flavor", "baremetal"), ("glance.image", "overcloud-full")}


BAREMETAL_GROUP = hot("""
    heat_template_version: 2016-10-14
    parameters:
      count: {type: number, default: 3}
    resources:
      nodes:
        type: OS::Heat::ResourceGroup
        properties:
          count: {get_param: count}
          removal_policies:
            - resource_list: ["1"]
          resource_def:
            type: OS::Nova::Server
            properties:
              name: overcloud-controller-%index%
              flavor: baremetal
              image: overcloud-full
              metadata: {role: controller, slot: "%index%"}
              networks:
                - network: ctlplane
    outputs:
      ips:
        value: {get_attr: [nodes, first_address]}
      first:
        value: {get_attr: [nodes, resource.0, first_address]}
""")


def test_a_resource_group_of_bare_metal_servers_names_its_members_by_index() -> None:
    template = parse_template(BAREMETAL_GROUP)
    group = template.resources["nodes"]
    properties = group.properties

    names = member_names(3, properties["removal_policies"])
    members = [member_definition(properties["resource_def"], int(name)) for name in names]

    assert names == ["0", "2", "3"]
    assert [m.properties["name"] for m in members] == ["overcloud-controller-0", "overcloud-controller-2",
                                                       "overcloud-controller-3"]
    assert members[1].properties["metadata"] == {"role": "controller", "slot": "2"}
    assert members[1].name == "2"
    assert members[1].type == "OS::Nova::Server"


def test_group_members_keep_their_names_and_skip_every_blacklisted_one() -> None:
    assert member_names(2, [], ["0", "1", "2"]) == ["0", "1"]
    assert member_names(3, [{"resource_list": ["1"]}], ["0", "1", "2"]) == ["0", "2", "3"]
    # after creation, an entry that names no member (nor a member's id) is not a name to skip
    assert member_names(3, [{"resource_list": ["7"]}], ["0", "1"]) == ["0", "1", "2"]
    assert member_names(2, [{"resource_list": ["server-uuid-0"]}], ["0", "1"],
                        refs_map={"0": "server-uuid-0", "1": "server-uuid-1"}) == ["1", "2"]
    # names blacklisted by an earlier update stay unused
    assert member_names(2, [], ["1", "2"], skiplist=["0"]) == ["1", "2"]
    assert member_names(0, [], []) == []


def test_a_custom_index_var_is_replaced_in_nested_values_but_not_in_keys() -> None:
    member = member_definition({"type": "OS::Neutron::Port",
                                "properties": {"name": "p-$i", "fixed_ips": [{"ip_address": "10.0.0.$i"}],
                                               "value_specs": {"$i": 1}}}, 4, "$i")

    assert member.properties == {"name": "p-4", "fixed_ips": [{"ip_address": "10.0.0.4"}], "value_specs": {"$i": 1}}


def test_a_group_member_definition_is_checked_where_it_is_written() -> None:
    error = refused(BAREMETAL_GROUP.replace("flavor: baremetal", "flavour: baremetal"))

    assert str(error) == ("Property error: resources.nodes.properties.resource_def.properties: "
                          "Unknown Property flavour (line 15)")


NESTED = hot("""
    heat_template_version: 2017-09-01
    parameters:
      index: {type: number}
      network: {type: string, default: ctlplane}
    resources:
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_param: network}
          name:
            str_replace:
              template: node-$i-port
              params: {$i: {get_param: index}}
      server:
        type: OS::Nova::Server
        properties:
          flavor: baremetal
          image: overcloud-full
          networks: [{port: {get_resource: port}}]
    outputs:
      ip:
        value: {get_attr: [server, first_address]}
""")


def test_a_nested_template_from_the_resource_registry_takes_its_parameters_as_properties() -> None:
    template = parse_template(hot("""
        heat_template_version: 2017-09-01
        resources:
          node:
            type: My::Node
            properties:
              index: 1
          ip_of_node:
            type: OS::Neutron::Port
            properties:
              network: ctlplane
              name: {get_attr: [node, ip]}
    """), files={"node.yaml": NESTED}, environment={"resource_registry": {"My::Node": "node.yaml"}})

    node = template.resources["node"]
    assert node.type == "node.yaml"
    assert node.nested_template == "node.yaml"
    assert template.nested["node.yaml"].creation_order() == [["port"], ["server"]]
    assert template.resource_type("node").properties["network"].default == "ctlplane"
    assert template.dependencies()["ip_of_node"] == {"node"}


def test_a_nested_template_is_refused_for_what_its_own_template_gets_wrong() -> None:
    environment = "resource_registry:\n  My::Node: node.yaml\n"
    wrong = NESTED.replace("flavor: baremetal", "flavor: [baremetal]")
    source = "heat_template_version: 2017-09-01\nresources:\n  node:\n    type: My::Node\n    properties: {index: 1}\n"

    error = refused(source, files={"node.yaml": wrong}, environment=environment)

    assert str(error).startswith("resources.node.type: Failed to validate nested template node.yaml: "
                                 "Property error: resources.server.properties.flavor: Value must be a string")
    assert error.line == 4


def test_a_nested_template_must_be_given_in_files() -> None:
    source = "heat_template_version: 2017-09-01\nresources:\n  node:\n    type: My::Node\n"

    error = refused(source, environment={"resource_registry": {"My::Node": "node.yaml"}})

    assert 'Could not fetch remote template "node.yaml"' in str(error)
    assert error.path == ("resources", "node", "type")


def test_a_registry_alias_maps_one_type_to_another() -> None:
    source = "heat_template_version: 2017-09-01\nresources:\n  net:\n    type: My::Net\n"

    template = parse_template(source, environment={"resource_registry": {"My::Net": "OS::Neutron::Net"}})

    assert template.resources["net"].type == "OS::Neutron::Net"
    assert template.resources["net"].nested_template is None


PARAMETERS = hot("""
    heat_template_version: 2021-04-16
    parameters:
      flavor:
        type: string
        default: m1.small
        constraints:
          - allowed_values: [m1.small, m1.large]
      count: {type: number, default: 2}
      debug: {type: boolean, default: false}
      names: {type: comma_delimited_list, default: "a,b"}
      extra: {type: json, default: {}}
      image: {type: string, constraints: [{custom_constraint: glance.image}]}
    resources: {}
""")


def test_parameters_come_from_the_request_then_the_environment_then_parameter_defaults_then_the_default() -> None:
    template = parse_template(PARAMETERS, environment=hot("""
        parameters:
          count: "5"
        parameter_defaults:
          count: 9
          debug: "yes"
          image: cirros
          not_declared_is_fine_here: 1
    """))

    resolved = resolve_parameters(template, {"flavor": "m1.large", "names": ["x", 3], "extra": '{"k": [1]}',
                                             "OS::stack_name": "s1"})

    assert resolved.values == {"OS::stack_name": "s1", "flavor": "m1.large", "count": 5, "debug": True,
                               "names": ["x", "3"], "extra": {"k": [1]}, "image": "cirros"}
    assert resolved.custom_checks == (CustomCheck("glance.image", "cirros", ("parameters", "image"), 12),)


def test_a_parameter_with_no_value_anywhere_is_not_provided() -> None:
    template = parse_template(PARAMETERS)

    with pytest.raises(StackValidationFailed, match=r"^The Parameter \(image\) was not provided\.$"):
        resolve_parameters(template, {})


def test_a_parameter_the_template_does_not_declare_is_refused() -> None:
    template = parse_template(PARAMETERS)

    with pytest.raises(StackValidationFailed, match=r"The Parameter \(flavour\) was not defined in template\."):
        resolve_parameters(template, {"image": "cirros", "flavour": "m1.small"})


def _constrained(kind: str, spec: str, ptype: str = "string") -> Template:
    return parse_template(hot(f"""
        heat_template_version: 2021-04-16
        parameters:
          p:
            type: {ptype}
            constraints:
              - {kind}: {spec}
        resources: {{}}
    """))


@pytest.mark.parametrize(("kind", "spec", "ptype", "value", "message"), [
    ("allowed_values", "[a, b]", "string", "abc", '"abc" is not an allowed value ["a", "b"]'),
    ("range", "{min: 1, max: 10}", "number", "11", "11 is out of range (min: 1, max: 10)"),
    ("range", "{min: 1}", "number", 0, "0 is out of range (min: 1, max: None)"),
    ("length", "{min: 2, max: 3}", "string", "abcd", "length (4) is out of range (min: 2, max: 3)"),
    ("length", "{max: 1}", "comma_delimited_list", "a,b", "length (2) is out of range (min: None, max: 1)"),
    ("length", "{max: 1}", "number", 5, "length (5) is out of range (min: None, max: 1)"),
    ("allowed_pattern", '"[a-z]+"', "string", "abc1", '"abc1" does not match pattern "[a-z]+"'),
    ("modulo", "{step: 2, offset: 1}", "number", 4, "4 is not a multiple of 2 with an offset of 1"),
])
def test_each_constraint_kind_is_refused_in_heats_words(kind: str, spec: str, ptype: str, value: Any,
                                                        message: str) -> None:
    template = _constrained(kind, spec, ptype)

    with pytest.raises(StackValidationFailed) as caught:
        resolve_parameters(template, {"p": value})

    assert str(caught.value) == f"Parameter 'p' is invalid: {message}"


def test_a_constraint_description_replaces_heats_words() -> None:
    template = parse_template(hot("""
        heat_template_version: 2021-04-16
        parameters:
          p:
            type: string
            constraints:
              - length: {min: 8}
                description: Password must be at least 8 characters
        resources: {}
    """))

    with pytest.raises(StackValidationFailed, match=r"^Parameter 'p' is invalid: Password must be at least 8"):
        resolve_parameters(template, {"p": "short"})
    assert resolve_parameters(template, {"p": "long enough"}).values["p"] == "long enough"


@pytest.mark.parametrize(("ptype", "value", "message"), [
    ("number", "abc", "could not convert string to float: 'abc'"),
    ("boolean", "maybe", "Unrecognized value 'maybe', acceptable values are"),
    ("json", "{not json", "Value must be valid JSON"),
])
def test_a_value_of_the_wrong_type_is_refused(ptype: str, value: str, message: str) -> None:
    template = parse_template(f"heat_template_version: 2021-04-16\nparameters:\n  p: {{type: {ptype}}}\n")

    with pytest.raises(StackValidationFailed, match=f"^Parameter 'p' is invalid: {message}"):
        resolve_parameters(template, {"p": value})


def test_a_default_that_breaks_its_own_constraint_is_refused_with_its_line() -> None:
    error = refused(hot("""
        heat_template_version: 2021-04-16
        parameters:
          p:
            type: number
            default: 20
            constraints:
              - range: {max: 10}
    """))

    assert str(error) == ("parameters.p.default: Invalid default 20 "
                          "(Parameter 'p' is invalid: 20 is out of range (min: None, max: 10)) (line 5)")


def test_a_yaml_syntax_error_names_its_line() -> None:
    error = refused("heat_template_version: 2018-08-31\nresources:\n  server:\n    type: [OS::Nova::Server\n")

    assert error.line == 5
    assert str(error).startswith("Error parsing template [root stack]")
    assert str(error).endswith("(line 5)")


@pytest.mark.parametrize("source", ["- a\n- b\n", "just text\n"])
def test_a_template_that_is_no_mapping_is_refused(source: str) -> None:
    assert str(refused(source)) == "The template is not a JSON object or YAML mapping."


def test_an_unknown_version_lists_the_ones_heat_accepts() -> None:
    with pytest.raises(InvalidTemplateVersion) as caught:
        parse_template("heat_template_version: 2099-01-01\nresources: {}\n")

    assert str(caught.value).startswith('The template version is invalid: "heat_template_version: 2099-01-01". '
                                        '"heat_template_version" should be one of: 2013-05-23, ')
    assert "wallaby" in str(caught.value)
    assert caught.value.line == 1


def test_a_missing_version_is_refused() -> None:
    with pytest.raises(InvalidTemplateVersion, match="Template version was not provided"):
        parse_template({"resources": {}})


@pytest.mark.parametrize("version", ["2013-05-23", "2015-10-15", "newton", "queens", "rocky", "2021-04-16"])
def test_every_version_heat_accepts_is_accepted(version: str) -> None:
    assert parse_template(f"heat_template_version: {version}\n").version == version


def test_an_unknown_section_is_refused_with_its_line() -> None:
    error = refused("heat_template_version: 2018-08-31\nresource:\n  a: {type: OS::Neutron::Net}\n")

    assert str(error) == "resource: The template section is invalid: resource (line 2)"


def test_an_unknown_resource_type_names_the_type_and_its_place() -> None:
    with pytest.raises(UnknownResourceType) as caught:
        parse_template("heat_template_version: 2018-08-31\nresources:\n  a:\n    type: OS::X::Y\n")

    assert str(caught.value) == "resources.a.type: The Resource Type (OS::X::Y) could not be found. (line 4)"


def test_a_resource_without_a_type_is_refused() -> None:
    error = refused("heat_template_version: 2018-08-31\nresources:\n  a:\n    properties: {}\n")

    assert str(error) == 'resources.a: Resource a is missing "type" (line 3)'


def _server(networks: str, extra: str = "") -> str:
    return hot(f"""
        heat_template_version: 2018-08-31
        parameters:
          flavor: {{type: string}}
        resources:
          net:
            type: OS::Neutron::Net
          server:
            type: OS::Nova::Server
            {extra}
            properties:
              flavor: {{get_param: flavor}}
              networks: {networks}
    """)


@pytest.mark.parametrize(("networks", "extra", "cls", "message"), [
    ("[{network: {get_resource: nett}}]", "", InvalidTemplateReference,
     'resources.server.properties.networks[0].network: The specified reference "nett" (in server) is incorrect. '
     "(line 12)"),
    ("[{network: {get_attr: [nett, name]}}]", "", InvalidTemplateReference,
     'resources.server.properties.networks[0].network: The specified reference "nett" (in server) is incorrect. '
     "(line 12)"),
    ("[{network: {get_attr: [net, nmae]}}]", "", StackValidationFailed,
     "resources.server.properties.networks[0].network: The Referenced Attribute (net nmae) is incorrect. (line 12)"),
    ("[{network: {get_param: netwrk}}]", "", StackValidationFailed,
     "resources.server.properties.networks[0].network: The Parameter (netwrk) was not provided. (line 12)"),
    ("[]", "depends_on: [net, nett]", InvalidTemplateReference,
     'resources.server.depends_on[1]: The specified reference "nett" (in server) is incorrect. (line 9)'),
    ("[]", "depends_on: nett", InvalidTemplateReference,
     'resources.server.depends_on: The specified reference "nett" (in server) is incorrect. (line 9)'),
])
def test_a_bad_reference_is_refused_naming_its_place(networks: str, extra: str, cls: type, message: str) -> None:
    with pytest.raises(cls) as caught:
        parse_template(_server(networks, extra))

    assert str(caught.value) == message


def test_a_bad_reference_in_an_output_names_the_output() -> None:
    error = refused(hot("""
        heat_template_version: 2018-08-31
        resources: {}
        outputs:
          ip:
            value: {get_attr: [server, first_address]}
    """))

    assert str(error) == 'outputs.ip.value: The specified reference "server" (in ip) is incorrect. (line 5)'


@pytest.mark.parametrize(("call", "message"), [
    ("{get_attr: server}", 'Argument to "get_attr" must be a list'),
    ("{get_attr: [net]}", 'Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]'),
    ("{get_param: []}", 'Function "get_param" must have arguments'),
    ("{str_replace: [a, b]}", 'Arguments to "str_replace" must be a map'),
    ("{str_replace: {template: a}}", '"str_replace" syntax should be'),
    ("{list_join: [',']}", 'Incorrect arguments to "list_join" should be'),
])
def test_a_function_with_wrong_arguments_is_refused_before_anything_is_created(call: str, message: str) -> None:
    error = refused(_server(f"[{{network: {call}}}]"))

    assert error.path[:6] == ("resources", "server", "properties", "networks", 0, "network")
    assert message in str(error)
    assert error.line == 12


def test_a_cycle_names_the_resources_in_it() -> None:
    with pytest.raises(CircularDependency) as caught:
        parse_template(hot("""
            heat_template_version: 2018-08-31
            resources:
              net: {type: OS::Neutron::Net}
              a:
                type: OS::Neutron::Port
                depends_on: b
                properties: {network: {get_resource: net}}
              b:
                type: OS::Neutron::Port
                properties:
                  network: {get_resource: net}
                  name: {get_attr: [a, name]}
        """))

    assert set(caught.value.cycle) == {"a", "b"}
    assert str(caught.value).startswith("resources: Circular Dependency Found: ")
    assert "a" in str(caught.value) and "b" in str(caught.value)


@pytest.mark.parametrize(("properties", "message"), [
    ("{flavor: m1, imgae: cirros}", "resources.server.properties: Unknown Property imgae"),
    ("{image: cirros}", "resources.server.properties: Property flavor not assigned"),
    ("{flavor: [m1]}", "resources.server.properties.flavor: Value must be a string; got ['m1']"),
    ("{flavor: m1, networks: {network: x}}",
     "resources.server.properties.networks: \"{'network': 'x'}\" is not a list"),
    ("{flavor: m1, networks: [{netwrk: x}]}", "resources.server.properties.networks[0]: Unknown Property netwrk"),
    ("{flavor: m1, metadata: [a]}", "resources.server.properties.metadata: \"['a']\" is not a map"),
    ("{flavor: m1, config_drive: maybe}", 'resources.server.properties.config_drive: "maybe" is not a valid boolean'),
    ("{flavor: m1, flavor_update_policy: NEVER}",
     'resources.server.properties.flavor_update_policy: "NEVER" is not an allowed value ["RESIZE", "REPLACE"]'),
])
def test_properties_are_checked_against_the_types_schema(properties: str, message: str) -> None:
    error = refused(f"heat_template_version: 2018-08-31\nresources:\n  server:\n    type: OS::Nova::Server\n"
                    f"    properties: {properties}\n")

    assert str(error) == f"Property error: {message} (line 5)"


def test_integer_properties_take_numbers_written_as_strings_but_nothing_else() -> None:
    source = ("heat_template_version: 2018-08-31\nresources:\n  sub:\n    type: OS::Neutron::Subnet\n"
              "    properties:\n      network: n\n      ip_version: {v}\n")

    assert parse_template(source.format(v='"6"')).resources["sub"].properties["ip_version"] == "6"
    assert str(refused(source.format(v="five"))) == ("Property error: resources.sub.properties.ip_version: "
                                                     "Value 'five' is not an integer (line 7)")
    assert str(refused(source.format(v="5"))) == ("Property error: resources.sub.properties.ip_version: "
                                                  "5 is not an allowed value [4, 6] (line 7)")


def test_a_property_error_from_the_engine_reads_as_heats() -> None:
    error = StackValidationFailed("The Flavor (m1.huge) could not be found.",
                                  path=("resources", "server", "properties", "flavor"), line=12)

    assert str(error) == ("Property error: resources.server.properties.flavor: "
                          "The Flavor (m1.huge) could not be found. (line 12)")
    assert error.message == str(error)
    assert error.path == ("resources", "server", "properties", "flavor")
    assert error.line == 12
    assert error.kind == "StackValidationFailed"
    assert UnknownResourceType("OS::X::Y").kind == "StackValidationFailed"


def test_an_unsupported_property_is_known_but_declined_by_name() -> None:
    template = parse_template(hot("""
        heat_template_version: 2018-08-31
        resources:
          server:
            type: OS::Nova::Server
            properties:
              flavor: m1
              user_data: "#!/bin/sh"
              networks: [{network: n, floating_ip: fip}]
    """))
    server = template.resources["server"]

    assert unsupported_properties(server) == (("resources", "server", "properties", "user_data"),
                                              ("resources", "server", "properties", "networks", 0, "floating_ip"))
    with pytest.raises(StackValidationFailed, match="Tether does not implement the property user_data"):
        decline_unsupported(server, line_of=template.line_of)


def test_replacement_is_needed_only_for_a_change_heat_cannot_make_in_place() -> None:
    assert not replacement_needed("OS::Nova::Server", {"flavor": "a", "name": "x"}, {"flavor": "b", "name": "y"})
    assert replacement_needed("OS::Nova::Server", {"flavor": "a"}, {"flavor": "a", "key_name": "k"})
    assert not replacement_needed("OS::Neutron::Port", {"network": "n"}, {"network": "n", "admin_state_up": True})
    assert replacement_needed("OS::Neutron::Port", {"network": "n"}, {"network": "m"})
    assert not replacement_needed("OS::Heat::ResourceGroup", {"count": 1}, {"count": 3})


def test_every_type_declares_show_and_the_attributes_the_issue_names() -> None:
    assert {"first_address", "networks", "addresses", "name", "show", "accessIPv4", "accessIPv6",
            "console_urls"} <= RESOURCE_TYPES["OS::Nova::Server"].attributes
    assert {"fixed_ips", "mac_address", "network_id", "subnets", "device_id"} <= \
        RESOURCE_TYPES["OS::Neutron::Port"].attributes
    assert all("show" in kind.attributes for kind in RESOURCE_TYPES.values())


class FakeResolver:
    def __init__(self, parameters: dict[str, Any]) -> None:
        self.parameters = parameters

    def parameter(self, name: str) -> Any:
        if name not in self.parameters:
            raise StackValidationFailed(f"The Parameter ({name}) was not provided.")
        return self.parameters[name]

    def resource_id(self, name: str) -> Any:
        return f"id-of-{name}"

    def attribute(self, name: str, path: tuple[Any, ...]) -> Any:
        return f"{name}.{'.'.join(map(str, path))}"


def test_functions_resolve_through_the_resolver() -> None:
    resolver = FakeResolver({"net": {"names": ["a", "b"]}, "count": 3})
    value = {
        "port": {"get_resource": "p"},
        "ip": {"get_attr": ["server", "networks", "private", 0]},
        "second": {"get_param": ["net", "names", "1"]},
        "missing_key": {"get_param": ["net", "nope"]},
        "name": {"str_replace": {"template": "host-$n-of-$count",
                                 "params": {"$n": 1, "$count": {"get_param": "count"}}}},
        "joined": {"list_join": [",", ["a", "b"], [{"get_resource": "p"}], [{"k": 1}]]},
        "split": {"str_split": [",", "x,y,z", 2]},
    }

    assert resolve(value, resolver) == {
        "port": "id-of-p", "ip": "server.networks.private.0", "second": "b", "missing_key": "",
        "name": "host-1-of-3", "joined": 'a,b,id-of-p,{"k": 1}', "split": "z",
    }
    assert references(value) == {"p", "server"}


def test_a_function_that_fails_while_resolving_names_its_place() -> None:
    with pytest.raises(StackValidationFailed) as caught:
        resolve({"a": [{"list_join": [",", "not a list"]}]}, FakeResolver({}), path=("outputs", "x", "value"))

    assert str(caught.value) == 'outputs.x.value.a[0].list_join: "list_join" must operate on a list'


def test_str_replace_prefers_the_longest_placeholder() -> None:
    value = {"str_replace": {"template": "$var1 $var10 $var", "params": {"$var": "A", "$var1": "B", "$var10": "C"}}}

    assert resolve(value, FakeResolver({})) == "B C A"


KEYS = st.text(alphabet="ABC", min_size=1, max_size=3)
VALUES = st.text(alphabet="xyz", min_size=1, max_size=3)


@given(template=st.text(alphabet="ABCxy -", max_size=30), params=st.dictionaries(KEYS, VALUES, max_size=4))
def test_str_replace_leaves_no_placeholder_behind_and_never_replaces_inside_a_replacement(
        template: str, params: dict[str, str]) -> None:
    result = resolve({"str_replace": {"template": template, "params": params}}, FakeResolver({}))

    assert not any(key in result for key in params)
    if len(params) == 1:
        [(key, value)] = params.items()
        assert result == template.replace(key, value)


@given(delimiter=st.text(alphabet=",;-", min_size=1, max_size=2),
       lists=st.lists(st.lists(st.text(alphabet="abc", min_size=1, max_size=4), max_size=4), min_size=1, max_size=3))
def test_list_join_joins_every_list_in_order(delimiter: str, lists: list[list[str]]) -> None:
    result = resolve({"list_join": [delimiter, *lists]}, FakeResolver({}))
    items = [item for items in lists for item in items]

    assert result == delimiter.join(items)
    assert (result.split(delimiter) if items else []) == items


@st.composite
def dags(draw: st.DrawFn) -> dict[str, set[str]]:
    names = [f"r{i}" for i in range(draw(st.integers(1, 12)))]
    return {name: set(draw(st.lists(st.sampled_from(names[:index]), max_size=3))) if index else set()
            for index, name in enumerate(names)}


@given(dags())
def test_creation_order_respects_every_dependency_and_each_batch_is_independent(graph: dict[str, set[str]]) -> None:
    resources = {name: {"type": "OS::Neutron::Net", "depends_on": sorted(deps)} for name, deps in graph.items()}
    template = parse_template({"heat_template_version": "2018-08-31", "resources": resources})

    batches = template.creation_order()
    position = {name: index for index, batch in enumerate(batches) for name in batch}

    assert sorted(position) == sorted(graph)
    assert sum(len(batch) for batch in batches) == len(graph)
    for name, deps in graph.items():
        assert all(position[dep] < position[name] for dep in deps)
    for batch in batches:
        assert not any(graph[name] & set(batch) for name in batch)


def test_a_resolved_definition_can_be_checked_again_for_the_lookups_it_now_needs() -> None:
    template = parse_template(SERVER_TWO_NETWORKS)
    server = template.resources["server"]
    resolver = FakeResolver({"flavor": "m1.small", "image": "cirros"})

    resolved = replace(server, properties=resolve(server.properties, resolver))
    checks = {(c.constraint, c.value) for c in validate_properties(resolved, line_of=template.line_of)}

    assert checks == {("nova.flavor", "m1.small"), ("glance.image", "cirros"), ("neutron.network", "id-of-private"),
                      ("neutron.network", "public")}
    # before resolving, only the literal value could be looked up
    assert {(c.constraint, c.value) for c in validate_properties(server)} == {("neutron.network", "public")}
