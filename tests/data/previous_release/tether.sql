PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE domains (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	enabled BOOLEAN NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
INSERT INTO domains VALUES('default','Default',1);
CREATE TABLE projects (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	domain_id VARCHAR(255) NOT NULL, 
	enabled BOOLEAN NOT NULL, 
	description VARCHAR(255) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (domain_id, name)
);
INSERT INTO projects VALUES('9d357fd7aa67476eadf88469c26860ef','admin','default',1,'');
INSERT INTO projects VALUES('08b19c3546414322ba5b1f172eba137f','demo','default',1,'');
INSERT INTO projects VALUES('f6cec7aa28ea4a6aa843b0b104fc9839','service','default',1,'');
CREATE TABLE users (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	password_hash VARCHAR(255) NOT NULL, 
	domain_id VARCHAR(255) NOT NULL, 
	enabled BOOLEAN NOT NULL, 
	default_project_id VARCHAR(255), 
	PRIMARY KEY (id), 
	UNIQUE (domain_id, name)
);
INSERT INTO users VALUES('3b574dc3f8704e0a9ca2e53f58de7bf7','admin','$argon2id$v=19$m=65536,t=3,p=4$LQtRtTGx8VLmM5OhZmPr3A$plbNDz6h28awIVGwzi2pQkhzSrHQ1+jZxON2SLhq1mg','default',1,NULL);
INSERT INTO users VALUES('54df6988c6874fe28c3efa901e03511b','demo','$argon2id$v=19$m=65536,t=3,p=4$WCvU3JR38yBcdG5pbC7APQ$a3e5E557QM1v7pGgoy4gLz+3VdNABwTXHRHbqN7RNFY','default',1,NULL);
CREATE TABLE roles (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	implies JSON, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
INSERT INTO roles VALUES('867cb5ba8121492b880269589ce74080','admin','["49108bb4423d4e39bc9e6e7e6cff94d4"]');
INSERT INTO roles VALUES('49108bb4423d4e39bc9e6e7e6cff94d4','member','["6c7f34ff082f4db0abb8c4d62f42720f"]');
INSERT INTO roles VALUES('6c7f34ff082f4db0abb8c4d62f42720f','reader','[]');
INSERT INTO roles VALUES('11b2e94c1f8545d796a9b5036014b802','service','[]');
CREATE TABLE role_assignments (
	user_id VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255) NOT NULL, 
	role_id VARCHAR(255) NOT NULL, 
	PRIMARY KEY (user_id, project_id, role_id)
);
INSERT INTO role_assignments VALUES('3b574dc3f8704e0a9ca2e53f58de7bf7','9d357fd7aa67476eadf88469c26860ef','867cb5ba8121492b880269589ce74080');
INSERT INTO role_assignments VALUES('54df6988c6874fe28c3efa901e03511b','08b19c3546414322ba5b1f172eba137f','49108bb4423d4e39bc9e6e7e6cff94d4');
CREATE TABLE tokens (
	id VARCHAR(255) NOT NULL, 
	user_id VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255), 
	system BOOLEAN NOT NULL, 
	roles JSON, 
	issued_at FLOAT NOT NULL, 
	expires_at FLOAT NOT NULL, 
	revoked BOOLEAN NOT NULL, 
	audit_id VARCHAR(255) NOT NULL, 
	methods JSON, 
	user_name VARCHAR(255) NOT NULL, 
	user_domain_id VARCHAR(255) NOT NULL, 
	user_domain_name VARCHAR(255) NOT NULL, 
	project_name VARCHAR(255), 
	project_domain_id VARCHAR(255), 
	project_domain_name VARCHAR(255), 
	role_ids JSON, 
	PRIMARY KEY (id)
);
INSERT INTO tokens VALUES('439aa5a9475d4a4737f3984b980e8468ada971c179a5c503b756f55d33cd5f4b','3b574dc3f8704e0a9ca2e53f58de7bf7','9d357fd7aa67476eadf88469c26860ef',0,'["admin", "member", "reader"]',1796177882.3013768196,1796181482.3013768195,0,'HWSLsblO_4MG0X9zmrVQjw','["password"]','admin','default','Default','admin','default','Default','{"admin": "867cb5ba8121492b880269589ce74080", "member": "49108bb4423d4e39bc9e6e7e6cff94d4", "reader": "6c7f34ff082f4db0abb8c4d62f42720f"}');
INSERT INTO tokens VALUES('2c5e6d80aeb0f3c4affebb7ef6aa70fb79aab8ec52a414c52cb182773f96a271','3b574dc3f8704e0a9ca2e53f58de7bf7','9d357fd7aa67476eadf88469c26860ef',0,'["admin", "member", "reader"]',1796177883.7903609276,1796181483.7903609275,0,'BnsRw6rp5jAK663Owxrxig','["password"]','admin','default','Default','admin','default','Default','{"admin": "867cb5ba8121492b880269589ce74080", "member": "49108bb4423d4e39bc9e6e7e6cff94d4", "reader": "6c7f34ff082f4db0abb8c4d62f42720f"}');
CREATE TABLE images (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255), 
	owner VARCHAR(255), 
	status VARCHAR(255) NOT NULL, 
	visibility VARCHAR(255) NOT NULL, 
	disk_format VARCHAR(255), 
	container_format VARCHAR(255), 
	min_disk INTEGER NOT NULL, 
	min_ram INTEGER NOT NULL, 
	size INTEGER, 
	protected BOOLEAN NOT NULL, 
	tags JSON, 
	properties JSON, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO images VALUES('0f51eac5-8b7c-4da9-a222-a6fc31348f98','cirros','9d357fd7aa67476eadf88469c26860ef','active','public','qcow2','bare',0,0,NULL,0,'[]','{}',1796177866.9754035472,1796177866.9754035472);
CREATE TABLE networks (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255) NOT NULL, 
	admin_state_up BOOLEAN NOT NULL, 
	shared BOOLEAN NOT NULL, 
	external BOOLEAN NOT NULL, 
	status VARCHAR(255) NOT NULL, 
	mtu INTEGER NOT NULL, 
	provider_network_type VARCHAR(255), 
	provider_physical_network VARCHAR(255), 
	provider_segmentation_id INTEGER, 
	description VARCHAR(255) NOT NULL, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO networks VALUES('86199c6d-1489-4e4e-8c03-22b479041cf7','private','9d357fd7aa67476eadf88469c26860ef',1,1,0,'ACTIVE',1500,'flat','physnet1',NULL,'',1796177866.9760541916,1796177866.9760541916);
CREATE TABLE subnets (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	network_id VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255) NOT NULL, 
	ip_version INTEGER NOT NULL, 
	cidr VARCHAR(255) NOT NULL, 
	gateway_ip VARCHAR(255), 
	allocation_pools JSON, 
	enable_dhcp BOOLEAN NOT NULL, 
	dns_nameservers JSON, 
	ipv6_address_mode VARCHAR(255), 
	ipv6_ra_mode VARCHAR(255), 
	description VARCHAR(255) NOT NULL, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO subnets VALUES('fae6664e-a2ff-425c-97b7-11ad5e2e0cd0','private-subnet','86199c6d-1489-4e4e-8c03-22b479041cf7','9d357fd7aa67476eadf88469c26860ef',4,'10.0.0.0/24','10.0.0.1','[{"start": "10.0.0.2", "end": "10.0.0.254"}]',1,'[]',NULL,NULL,'',1796177866.9769809245,1796177866.9769809245);
CREATE TABLE ports (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	network_id VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255) NOT NULL, 
	mac_address VARCHAR(255) NOT NULL, 
	admin_state_up BOOLEAN NOT NULL, 
	status VARCHAR(255) NOT NULL, 
	device_id VARCHAR(255) NOT NULL, 
	device_owner VARCHAR(255) NOT NULL, 
	binding_host_id VARCHAR(255) NOT NULL, 
	binding_vnic_type VARCHAR(255) NOT NULL, 
	binding_profile JSON, 
	binding_vif_type VARCHAR(255) NOT NULL, 
	created_by VARCHAR(255) NOT NULL, 
	description VARCHAR(255) NOT NULL, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_ports_network_mac UNIQUE (network_id, mac_address)
);
INSERT INTO ports VALUES('291cc324-8840-4b5f-beca-ab1cc76ec7bd','','86199c6d-1489-4e4e-8c03-22b479041cf7','9d357fd7aa67476eadf88469c26860ef','fa:16:3e:77:b1:ce',1,'ACTIVE','1579e48e-246a-4bdf-b5ee-066a0b60f08a','compute:nova','compute-2','normal','{}','ovs','compute','',1796177882.418963909,1796177882.4205400943);
CREATE TABLE ip_allocations (
	subnet_id VARCHAR(255) NOT NULL, 
	ip_address VARCHAR(255) NOT NULL, 
	network_id VARCHAR(255) NOT NULL, 
	port_id VARCHAR(255) NOT NULL, 
	PRIMARY KEY (subnet_id, ip_address)
);
INSERT INTO ip_allocations VALUES('fae6664e-a2ff-425c-97b7-11ad5e2e0cd0','10.0.0.2','86199c6d-1489-4e4e-8c03-22b479041cf7','291cc324-8840-4b5f-beca-ab1cc76ec7bd');
CREATE TABLE nodes (
	uuid VARCHAR(255) NOT NULL, 
	name VARCHAR(255), 
	driver VARCHAR(255) NOT NULL, 
	provision_state VARCHAR(255) NOT NULL, 
	target_provision_state VARCHAR(255), 
	power_state VARCHAR(255) NOT NULL, 
	target_power_state VARCHAR(255), 
	maintenance BOOLEAN NOT NULL, 
	maintenance_reason VARCHAR(255), 
	instance_uuid VARCHAR(255), 
	instance_info JSON, 
	properties JSON, 
	driver_info JSON, 
	extra JSON, 
	resource_class VARCHAR(255), 
	chassis_uuid VARCHAR(255), 
	last_error VARCHAR(255), 
	reservation VARCHAR(255), 
	provision_updated_at FLOAT NOT NULL, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (uuid), 
	CONSTRAINT uq_nodes_name UNIQUE (name), 
	CONSTRAINT uq_nodes_instance UNIQUE (instance_uuid)
);
INSERT INTO nodes VALUES('08d457a9-8b26-4ae5-98d1-9a82521bf3fe','node-1','fake-hardware','available',NULL,'power off',NULL,0,NULL,NULL,'{}','{"cpus": 8, "memory_mb": 32768, "local_gb": 500}','{}','{}','baremetal',NULL,NULL,NULL,1796177867.2033219337,1796177866.9776828289,1796177867.2033219337);
INSERT INTO nodes VALUES('5d2e5f17-5b1a-48f0-a16d-5585822f690a','node-2','fake-hardware','available',NULL,'power off',NULL,0,NULL,NULL,'{}','{"cpus": 8, "memory_mb": 32768, "local_gb": 500}','{}','{}','baremetal',NULL,NULL,NULL,1796177867.2039768696,1796177866.9839072227,1796177867.2039768696);
INSERT INTO nodes VALUES('5af9d460-69f1-4335-861f-5c45f5e37045','node-3','fake-hardware','available',NULL,'power off',NULL,0,NULL,NULL,'{}','{"cpus": 8, "memory_mb": 32768, "local_gb": 500}','{}','{}','baremetal',NULL,NULL,NULL,1796177867.2040998936,1796177866.9846203326,1796177867.2040998936);
INSERT INTO nodes VALUES('3650e74b-211a-4ac0-a4f2-ab49ee0172f3','node-4','fake-hardware','available',NULL,'power off',NULL,0,NULL,NULL,'{}','{"cpus": 8, "memory_mb": 32768, "local_gb": 500}','{}','{}','baremetal',NULL,NULL,NULL,1796177867.204174757,1796177866.9854471683,1796177867.204174757);
CREATE TABLE node_ports (
	uuid VARCHAR(255) NOT NULL, 
	address VARCHAR(255) NOT NULL, 
	node_uuid VARCHAR(255) NOT NULL, 
	portgroup_uuid VARCHAR(255), 
	physical_network VARCHAR(255), 
	pxe_enabled BOOLEAN NOT NULL, 
	local_link_connection JSON, 
	internal_info JSON, 
	extra JSON, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (uuid), 
	CONSTRAINT uq_node_ports_address UNIQUE (address)
);
INSERT INTO node_ports VALUES('ee7db1d7-b75d-401e-befc-84d2c3a8c66e','52:54:00:00:01:00','08d457a9-8b26-4ae5-98d1-9a82521bf3fe',NULL,'physnet1',1,'{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth1/1/0", "switch_info": "tor-1"}','{}','{}',1796177866.9783244132,1796177866.9783244132);
INSERT INTO node_ports VALUES('20cc2942-a235-44af-8387-efec05e5221c','52:54:00:00:02:00','5d2e5f17-5b1a-48f0-a16d-5585822f690a',NULL,'physnet1',1,'{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth1/2/0", "switch_info": "tor-1"}','{}','{}',1796177866.9840624332,1796177866.9840624332);
INSERT INTO node_ports VALUES('f272e869-0a6e-4f15-8714-c35b7772f2c5','52:54:00:00:03:00','5af9d460-69f1-4335-861f-5c45f5e37045',NULL,'physnet1',1,'{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth1/3/0", "switch_info": "tor-1"}','{}','{}',1796177866.984723091,1796177866.984723091);
INSERT INTO node_ports VALUES('6d54950e-af80-411c-800d-0307a03a9c52','52:54:00:00:04:00','3650e74b-211a-4ac0-a4f2-ab49ee0172f3',NULL,'physnet1',1,'{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth1/4/0", "switch_info": "tor-1"}','{}','{}',1796177866.985553503,1796177866.985553503);
CREATE TABLE portgroups (
	uuid VARCHAR(255) NOT NULL, 
	node_uuid VARCHAR(255) NOT NULL, 
	name VARCHAR(255), 
	address VARCHAR(255), 
	mode VARCHAR(255), 
	standalone_ports_supported BOOLEAN NOT NULL, 
	internal_info JSON, 
	extra JSON, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (uuid)
);
CREATE TABLE chassis (
	uuid VARCHAR(255) NOT NULL, 
	description VARCHAR(255), 
	extra JSON, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	PRIMARY KEY (uuid)
);
CREATE TABLE flavors (
	id VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	vcpus INTEGER NOT NULL, 
	ram INTEGER NOT NULL, 
	disk INTEGER NOT NULL, 
	ephemeral INTEGER NOT NULL, 
	swap INTEGER NOT NULL, 
	is_public BOOLEAN NOT NULL, 
	resource_class VARCHAR(255), 
	extra_specs JSON, 
	description VARCHAR(255), 
	PRIMARY KEY (id), 
	CONSTRAINT uq_flavors_name UNIQUE (name)
);
INSERT INTO flavors VALUES('1','m1.tiny',1,512,1,0,0,1,NULL,'{}',NULL);
INSERT INTO flavors VALUES('2','m1.small',1,2048,20,0,0,1,NULL,'{}',NULL);
INSERT INTO flavors VALUES('3','baremetal',1,4096,40,0,0,1,'baremetal','{"resources:CUSTOM_BAREMETAL": "1"}',NULL);
CREATE TABLE hypervisors (
	id INTEGER NOT NULL, 
	hostname VARCHAR(255) NOT NULL, 
	vcpus INTEGER NOT NULL, 
	memory_mb INTEGER NOT NULL, 
	local_gb INTEGER NOT NULL, 
	state VARCHAR(255) NOT NULL, 
	status VARCHAR(255) NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_hypervisors_hostname UNIQUE (hostname)
);
INSERT INTO hypervisors VALUES(1,'compute-1',64,262144,4000,'up','enabled');
INSERT INTO hypervisors VALUES(2,'compute-2',64,262144,4000,'up','enabled');
CREATE TABLE instances (
	uuid VARCHAR(255) NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255) NOT NULL, 
	user_id VARCHAR(255) NOT NULL, 
	flavor_id VARCHAR(255) NOT NULL, 
	image_id VARCHAR(255), 
	vm_state VARCHAR(255) NOT NULL, 
	task_state VARCHAR(255), 
	power_state INTEGER NOT NULL, 
	host VARCHAR(255), 
	node VARCHAR(255), 
	is_baremetal BOOLEAN NOT NULL, 
	requested_networks JSON, 
	metadata JSON, 
	key_name VARCHAR(255), 
	deadline FLOAT, 
	created_at FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	launched_at FLOAT, 
	deleted BOOLEAN NOT NULL, 
	deleted_at FLOAT, 
	PRIMARY KEY (uuid)
);
INSERT INTO instances VALUES('1579e48e-246a-4bdf-b5ee-066a0b60f08a','vm-1','9d357fd7aa67476eadf88469c26860ef','3b574dc3f8704e0a9ca2e53f58de7bf7','1','0f51eac5-8b7c-4da9-a222-a6fc31348f98','active',NULL,1,'compute-2','compute-2',0,'[{"network_id": "86199c6d-1489-4e4e-8c03-22b479041cf7", "fixed_ip": null, "tag": null}]','{}',NULL,NULL,1796177882.41370821,1796177882.4208052158,1796177882.4208052158,0,NULL);
CREATE TABLE instance_vifs (
	instance_uuid VARCHAR(255) NOT NULL, 
	port_id VARCHAR(255) NOT NULL, 
	network_id VARCHAR(255) NOT NULL, 
	address VARCHAR(255) NOT NULL, 
	position INTEGER NOT NULL, 
	preserve_on_delete BOOLEAN NOT NULL, 
	fixed_ips JSON, 
	tag VARCHAR(255), 
	PRIMARY KEY (instance_uuid, port_id)
);
INSERT INTO instance_vifs VALUES('1579e48e-246a-4bdf-b5ee-066a0b60f08a','291cc324-8840-4b5f-beca-ab1cc76ec7bd','86199c6d-1489-4e4e-8c03-22b479041cf7','fa:16:3e:77:b1:ce',0,0,'[{"subnet_id": "fae6664e-a2ff-425c-97b7-11ad5e2e0cd0", "ip_address": "10.0.0.2"}]',NULL);
CREATE TABLE instance_actions (
	request_id VARCHAR(255) NOT NULL, 
	instance_uuid VARCHAR(255) NOT NULL, 
	action VARCHAR(255) NOT NULL, 
	project_id VARCHAR(255) NOT NULL, 
	user_id VARCHAR(255) NOT NULL, 
	start_time FLOAT NOT NULL, 
	updated_at FLOAT NOT NULL, 
	message VARCHAR(255), 
	PRIMARY KEY (request_id, instance_uuid)
);
INSERT INTO instance_actions VALUES('req-799fb2ec-8bc0-4c28-a9f4-be0bbe89ea76','1579e48e-246a-4bdf-b5ee-066a0b60f08a','create','9d357fd7aa67476eadf88469c26860ef','3b574dc3f8704e0a9ca2e53f58de7bf7',1796177882.41370821,1796177882.4208052158,NULL);
CREATE TABLE action_events (
	request_id VARCHAR(255) NOT NULL, 
	event VARCHAR(255) NOT NULL, 
	start_time FLOAT NOT NULL, 
	finish_time FLOAT, 
	result VARCHAR(255), 
	traceback TEXT, 
	host VARCHAR(255), 
	id INTEGER NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO action_events VALUES('req-799fb2ec-8bc0-4c28-a9f4-be0bbe89ea76','compute_create',1796177882.41370821,1796177882.4208052158,'Success',NULL,'compute-2',1);
CREATE TABLE instance_faults (
	instance_uuid VARCHAR(255) NOT NULL, 
	code INTEGER NOT NULL, 
	message TEXT NOT NULL, 
	details TEXT NOT NULL, 
	created_at FLOAT NOT NULL, 
	id INTEGER NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE intents (
	id VARCHAR(255) NOT NULL, 
	kind VARCHAR(64) NOT NULL, 
	"key" VARCHAR(64) NOT NULL, 
	payload TEXT NOT NULL, 
	created_at FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE tether_schema (
	version INTEGER NOT NULL, 
	PRIMARY KEY (version)
);
INSERT INTO tether_schema VALUES(1);
CREATE INDEX ix_tokens_user ON tokens (user_id);
CREATE INDEX ix_images_name ON images (name);
CREATE INDEX ix_networks_name ON networks (name);
CREATE INDEX ix_subnets_network ON subnets (network_id);
CREATE INDEX ix_ports_device ON ports (device_id);
CREATE INDEX ix_ports_name ON ports (name);
CREATE INDEX ix_ip_allocations_port ON ip_allocations (port_id);
CREATE INDEX ix_node_ports_node ON node_ports (node_uuid);
CREATE INDEX ix_portgroups_node ON portgroups (node_uuid);
CREATE INDEX ix_instances_name ON instances (name);
CREATE INDEX ix_instances_project ON instances (project_id);
CREATE INDEX ix_action_events_request ON action_events (request_id);
CREATE INDEX ix_instance_faults_instance ON instance_faults (instance_uuid);
CREATE INDEX ix_intents_key ON intents ("key");
COMMIT;
